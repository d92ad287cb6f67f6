// A recording that ends without a sample (the process allocated less than the
// interval) is still written, so that its path can be read; but only where no other
// recording is: a path another process holds, or one written since this process
// started, is left as it is, and no pid-suffixed twin is made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agent/recording/recorder.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "profile/jfr_profile.h"

namespace nmprof {
namespace {

class NoFrames : public FrameResolver {
 public:
  void resolve(const CallFrame&, JfrPools&, uint32_t&, int32_t&) override {}
};

std::string temp_path(const char* name) {
  return "/tmp/nmprof-" + std::string(name) + "-" + std::to_string(getpid()) + ".jfr";
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Starts and finishes a recording into `path` without a sample. Returns whether the
// path existed after a write before the end (each second, at exec).
bool record_nothing(const std::string& path) {
  NoFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  recorder.start(path, {{"nativemem", "524288"}}, 0, false);
  recorder.flush();
  bool written_before_end = exists(path);
  recorder.finish();
  return written_before_end;
}

TEST(EmptyRecording, ARecordingThatEndsWithoutSamplesIsWritten) {
  std::string path = temp_path("empty");
  EXPECT_FALSE(record_nothing(path));  // the image may exec and record on
  profile::Profile p = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(p.allocations().empty());
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].pid, getpid());
  EXPECT_EQ(p.processes[0].sampling_interval(), 524288u);
  EXPECT_FALSE(p.processes[0].statistics.empty());
}

TEST(EmptyRecording, APathAnotherProcessHoldsIsLeftToIt) {
  std::string path = temp_path("held");
  int holder = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(flock(holder, LOCK_EX), 0);  // as a recording process holds its file
  record_nothing(path);
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  std::string twin = path.substr(0, path.size() - 4) + "." + std::to_string(getpid()) + ".jfr";
  EXPECT_FALSE(exists(twin));
  close(holder);
  std::remove(path.c_str());
  std::remove(twin.c_str());
}

TEST(EmptyRecording, ARecordingWrittenSinceTheProcessStartedIsKept) {
  std::string path = temp_path("recent");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("another process's recording", f);
  fclose(f);
  record_nothing(path);
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0);
  std::remove(path.c_str());
  EXPECT_EQ(st.st_size, 27);
}

}  // namespace
}  // namespace nmprof
