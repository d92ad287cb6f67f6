// Real recordings of JDK 17 and 25 (made here with -XX:StartFlightRecording), read
// by the generic reader and checked against the JDK's own `jfr` tool.
// Needs openjdk-17-jdk-headless and python3; JDK 25 is used when installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "formats/jfr/reading/recording_file.h"
#include "formats/jfr/reading/recording.h"
#include "profile/jfr_profile.h"
#include "tests/jfr_reader/test_recordings.h"

namespace nmprof::jfr {
namespace {

const char* const kTinyJava = R"(
import java.util.*;
public class Tiny {
  static List<Object> keep = new ArrayList<>();
  static Object allocate(int i) { return new byte[1024 + (i % 64) * 16]; }
  public static void main(String[] args) {
    System.out.println(ProcessHandle.current().pid());
    long end = System.nanoTime() + 500_000_000L;
    for (int i = 0; System.nanoTime() < end; i++) {
      Object o = allocate(i);
      if (i % 1000 == 0) keep.add(o);
    }
  }
}
)";

std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

struct JdkRecording {
  std::string path;
  long pid = 0;
};

JdkRecording record_with(const std::string& jdk) {
  std::string dir = testing::temp_path(jdk.substr(jdk.rfind('/') + 1));
  run("mkdir -p " + dir);
  std::ofstream(dir + "/Tiny.java") << kTinyJava;
  JdkRecording recording{dir + "/tiny.jfr", 0};
  std::string out = run(jdk + "/bin/java -XX:StartFlightRecording:filename=" + recording.path + ",settings=profile " +
                        dir + "/Tiny.java 2>/dev/null");
  // The pid is the program's only output, after the JVM's own startup messages.
  size_t last_line = out.find_last_of('\n', out.size() >= 2 ? out.size() - 2 : 0);
  recording.pid = std::atol(out.c_str() + (last_line == std::string::npos ? 0 : last_line + 1));
  return recording;
}

// One recording per JDK (a JVM run takes seconds), checked three ways.
class JdkRecordingTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    jdk_ = GetParam();
    bool installed = access((jdk_ + "/bin/java").c_str(), X_OK) == 0;
    if (!installed && jdk_.find("temurin-25") != std::string::npos) GTEST_SKIP() << jdk_ << " is not installed";
    ASSERT_TRUE(installed) << jdk_ << " is missing (Debian package openjdk-17-jdk-headless)";
    recording_ = record_with(jdk_);
    ASSERT_GT(recording_.pid, 0) << "java did not run";
  }

  void every_event_decodes_and_counts_match_jfr_summary();
  void allocation_samples_match_jfr_print();
  void builds_a_java_heap_profile();

  std::string jdk_;
  JdkRecording recording_;
};

TEST_P(JdkRecordingTest, ReadsLikeTheJdkTool) {
  {
    SCOPED_TRACE("event counts");
    every_event_decodes_and_counts_match_jfr_summary();
  }
  {
    SCOPED_TRACE("allocation samples");
    allocation_samples_match_jfr_print();
  }
  {
    SCOPED_TRACE("profile");
    builds_a_java_heap_profile();
  }
}

void JdkRecordingTest::every_event_decodes_and_counts_match_jfr_summary() {
  MappedFile file = jfr::map_recording(recording_.path);
  Recording recording(file.bytes());
  std::map<std::string, size_t> ours;
  long pid = 0;
  recording.for_each_chunk([&](const Chunk& chunk) {
    chunk.for_each_event([&](const Event& e) {
      Value v = e.value();  // every field of every event, or a warning
      ours[e.type().name]++;
      if (e.type().name == "jdk.JVMInformation") pid = v.field("pid").integer();
    });
  });
  EXPECT_TRUE(recording.warnings().empty()) << recording.warnings()[0];
  EXPECT_EQ(pid, recording_.pid);

  std::map<std::string, size_t> theirs;
  std::istringstream summary(run(jdk_ + "/bin/jfr summary " + recording_.path));
  for (std::string line; std::getline(summary, line);) {
    std::istringstream words(line);
    std::string type;
    size_t count = 0;
    if (!(words >> type >> count) || type.rfind("jdk.", 0) != 0 || count == 0) continue;
    if (type != "jdk.Metadata" && type != "jdk.CheckPoint" && type != "jdk.Checkpoint") theirs[type] = count;
  }
  ASSERT_GT(theirs.size(), 20u) << "could not read `jfr summary`";
  EXPECT_EQ(ours, theirs);
}

// Weight, innermost method and thread of every allocation sample, sorted; by the JDK
// tool (through its JSON output) and by us.
void JdkRecordingTest::allocation_samples_match_jfr_print() {
  const char* script =
      "import json,sys\n"
      "out=[]\n"
      "for e in json.load(sys.stdin)['recording']['events']:\n"
      "  v=e['values']; frames=v['stackTrace']['frames'] if v['stackTrace'] else []\n"
      "  method=frames[0]['method'] if frames else None\n"
      "  thread=v['eventThread']\n"
      "  out.append('%s %s %s' % (v['weight'], method['name'] if method else '-',"
      " thread['osThreadId'] if thread else '-'))\n"
      "print('\\n'.join(sorted(out)))\n";
  std::string script_path = testing::temp_path("samples.py");
  std::ofstream(script_path) << script;
  std::string theirs = run(jdk_ + "/bin/jfr print --json --events jdk.ObjectAllocationSample " + recording_.path +
                           " | python3 " + script_path);

  MappedFile file = jfr::map_recording(recording_.path);
  Recording recording(file.bytes());
  std::vector<std::string> lines;
  recording.for_each_chunk([&](const Chunk& chunk) {
    const Type* type = chunk.types().find("jdk.ObjectAllocationSample");
    if (!type) return;
    FieldBinding binding(*type, {"weight", "stackTrace", "eventThread"});
    Value slots[3];
    chunk.for_each_event([&](const Event& e) {
      if (&e.type() != type) return;
      e.read(binding, slots);
      Value stack = chunk.resolve(slots[1]);
      const auto& frames = stack.field("frames").elements();
      // Either may be missing (a null pool reference): the JDK tool prints null then.
      std::string top = "-";
      Value method = frames.empty() ? Value() : chunk.resolve(frames[0].field("method"));
      if (!method.is_null()) top = chunk.resolve(method.field("name")).field("string").string();
      Value thread = chunk.resolve(slots[2]);
      std::string thread_id = thread.is_null() ? "-" : std::to_string(thread.field("osThreadId").integer());
      lines.push_back(std::to_string(slots[0].integer()) + " " + top + " " + thread_id);
    });
  });
  std::sort(lines.begin(), lines.end());
  std::string ours;
  for (const auto& l : lines) ours += l + "\n";
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(ours, theirs);
}

void JdkRecordingTest::builds_a_java_heap_profile() {
  profile::Profile p = profile::read_profile(recording_.path);
  EXPECT_TRUE(p.warnings.empty());
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].pid, recording_.pid);
  EXPECT_NE(p.processes[0].command.find("Tiny.java"), std::string::npos) << p.processes[0].command;
  EXPECT_TRUE(p.processes[0].settings.empty()) << "JDK per-event settings are not profiler options";
  ASSERT_FALSE(p.allocations().empty());
  bool found_allocate = false;
  for (const auto& a : p.allocations()) {
    EXPECT_EQ(a.source, profile::AllocationSource::JavaHeap);
    EXPECT_GT(a.allocated.bytes, 0);
    EXPECT_EQ(a.live.samples, 0u);  // the JDK's samples come without frees
    const auto& frames = p.stacks()[a.stack].frames;
    if (frames.empty()) continue;
    const auto& top = p.frames()[frames[0]];
    EXPECT_TRUE(profile::is_java(top.kind)) << top.function;
    if (top.function == "allocate" && top.container == "Tiny") {
      found_allocate = true;
      EXPECT_EQ(p.threads()[a.thread].name, "main");
      EXPECT_GT(top.line, 0);
    }
  }
  EXPECT_TRUE(found_allocate);
}

INSTANTIATE_TEST_SUITE_P(Jdk, JdkRecordingTest,
                         ::testing::Values("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/temurin-25-jdk-amd64"),
                         [](const auto& info) { return std::string(info.index == 0 ? "Jdk17" : "Jdk25"); });

}  // namespace
}  // namespace nmprof::jfr
