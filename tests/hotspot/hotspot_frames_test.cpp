// The frame classifier inside real JVMs: FramesTarget (run with the probe agent,
// frames_probe.cpp) calls the probe from interpreted, C1, C2, inlined, deep, OSR,
// deoptimized and re-entered (JNI upcall) frames, and the probe reports each
// AsyncGetCallTrace frame with the type HotSpotFrames gave it. JDK 17 is required;
// JDK 25 runs when installed.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr auto kJvmTimeout = std::chrono::seconds(120);

// How the test methods run: FramesTarget's i* methods are always interpreted,
// c* compiled once warm (by C2, or C1 alone), n* inlined into their c* caller.
enum class Mode { kInterpreter, kC2, kC1 };

std::vector<std::string> mode_options(Mode mode) {
  std::vector<std::string> options = {
      "-XX:CompileCommand=quiet",
      "-XX:CompileCommand=exclude,FramesTarget::i*",
      "-XX:CompileCommand=exclude,FramesTarget::main",
      "-XX:CompileCommand=exclude,FramesTarget::run",
      "-XX:CompileCommand=dontinline,FramesTarget::c*",
      "-XX:CompileCommand=inline,FramesTarget::n*",
  };
  switch (mode) {
    case Mode::kInterpreter: options.push_back("-Xint"); break;
    case Mode::kC2: options.insert(options.end(), {"-XX:-TieredCompilation", "-Xbatch"}); break;
    case Mode::kC1: options.insert(options.end(), {"-XX:TieredStopAtLevel=1", "-Xbatch"}); break;
  }
  return options;
}

struct JvmRun {
  int status = -1;
  std::string out;
  std::string err;
  std::map<std::string, std::string> results;  // scenario -> report
  std::string warmup;                           // "ok=N failed=M"
};

// Runs FramesTarget on `jdk` with `options` and the scenarios.
JvmRun run_target(const std::string& jdk, std::vector<std::string> options, const std::vector<std::string>& scenarios) {
  std::vector<std::string> args = {jdk + "/bin/java", "-agentpath:" NMPROF_TEST_PROBE, "-cp", NMPROF_TEST_CLASS_DIR};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("FramesTarget");
  args.insert(args.end(), scenarios.begin(), scenarios.end());

  JvmRun run;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return run;
  pid_t child = fork();
  if (child == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* texts[2] = {&run.out, &run.err};
  auto deadline = std::chrono::steady_clock::now() + kJvmTimeout;
  int open_fds = 2;
  while (open_fds > 0 && std::chrono::steady_clock::now() < deadline) {
    if (poll(fds, 2, 1000) <= 0) continue;
    for (int i = 0; i < 2; i++) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buffer[4096];
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        texts[i]->append(buffer, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
  }
  if (open_fds > 0) kill(child, SIGKILL);
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  waitpid(child, &run.status, 0);

  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag, scenario, rest;
    words >> tag;
    if (tag == "RESULT" && words >> scenario && std::getline(words >> std::ws, rest)) run.results[scenario] = rest;
    if (tag == "WARMUP") std::getline(words >> std::ws, run.warmup);
  }
  return run;
}

std::string jdk_home(int version) {
  std::string home = version == 17 ? NMPROF_TEST_JDK17 : NMPROF_TEST_JDK25;
  return access((home + "/bin/java").c_str(), X_OK) == 0 ? home : "";
}

// The expected report: "FramesTarget.<method>:<type>" innermost first.
class Frames {
 public:
  explicit Frames(Mode mode) : mode_(mode) {}

  Frames& native(const char* method) { return add(method, "native"); }
  Frames& interpreted(const char* method) { return add(method, "interpreted"); }
  // A c* method: compiled in compiled modes.
  Frames& compiled(const char* method) {
    return add(method, mode_ == Mode::kInterpreter ? "interpreted" : mode_ == Mode::kC2 ? "compiled" : "c1");
  }
  // An n* method: inlined into its compiled caller in compiled modes.
  Frames& inlined(const char* method) { return add(method, mode_ == Mode::kInterpreter ? "interpreted" : "inlined"); }
  // run() and main(), under every scenario.
  std::string bottom() {
    interpreted("run").interpreted("main");
    return text_;
  }
  std::string text() const { return text_; }

 private:
  Frames& add(const char* method, const char* type) {
    if (!text_.empty()) text_ += ' ';
    text_ += std::string("FramesTarget.") + method + ":" + type;
    return *this;
  }

  Mode mode_;
  std::string text_;
};

Frames deep_chain(Mode mode, int depth) {
  Frames frames(mode);
  frames.native("probe");
  for (int i = 0; i < depth; i++) frames.interpreted("iDeepHop").inlined("nDeepStep").compiled("cDeep");
  return frames;
}

struct Config {
  int jdk;
  Mode mode;
};

std::string config_name(const Config& config) {
  const char* mode = config.mode == Mode::kInterpreter ? "Interpreter" : config.mode == Mode::kC2 ? "C2" : "C1";
  return "Jdk" + std::to_string(config.jdk) + mode;
}

class HotSpotFramesTest : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    home_ = jdk_home(GetParam().jdk);
    if (home_.empty()) {
      ASSERT_NE(GetParam().jdk, 17) << "JDK 17 is required at " NMPROF_TEST_JDK17;
      GTEST_SKIP() << "JDK " << GetParam().jdk << " is not installed";
    }
  }

  JvmRun run(const std::vector<std::string>& scenarios) {
    JvmRun result = run_target(home_, mode_options(GetParam().mode), scenarios);
    EXPECT_EQ(result.status, 0) << result.err;
    // Every warm-up call was classified too: thousands of walks while methods got
    // compiled, inlined and replaced.
    EXPECT_TRUE(result.warmup.ends_with(" failed=0")) << result.warmup;
    return result;
  }

  std::string home_;
};

TEST_P(HotSpotFramesTest, TypesEveryFrame) {
  const Mode mode = GetParam().mode;
  JvmRun r = run({"interpreted", "compiled", "inlined", "inlined2", "deep", "truncated", "upcall", "osr"});

  EXPECT_EQ(r.results["interpreted"],
            Frames(mode).native("probe").interpreted("iInterpretedLeaf").interpreted("iInterpretedCaller").bottom());
  EXPECT_EQ(r.results["compiled"],
            Frames(mode).native("probe").compiled("cLeaf").interpreted("iDriveCompiled").bottom());
  EXPECT_EQ(r.results["inlined"], Frames(mode)
                                      .native("probe")
                                      .inlined("nInlined")
                                      .compiled("cInlineCaller")
                                      .interpreted("iDriveInlined")
                                      .bottom());
  EXPECT_EQ(r.results["inlined2"], Frames(mode)
                                       .native("probe")
                                       .inlined("nInner")
                                       .inlined("nOuter")
                                       .compiled("cInlineCaller2")
                                       .interpreted("iDriveInlined2")
                                       .bottom());
  EXPECT_EQ(r.results["deep"], deep_chain(mode, 8).interpreted("iDriveDeep").bottom());
  // Asked for 5 frames only: the first 5, the last of them inside a compiled frame.
  EXPECT_EQ(r.results["truncated"], deep_chain(mode, 1).interpreted("iDeepHop").text());
  EXPECT_EQ(r.results["upcall"], Frames(mode)
                                     .native("probe")
                                     .compiled("cUpcallTarget")
                                     .native("upcall")
                                     .compiled("cUpcallCaller")
                                     .interpreted("iDriveUpcall")
                                     .bottom());
  EXPECT_EQ(r.results["osr"], Frames(mode).native("probe").compiled("cOsrLoop").bottom());
}

TEST_P(HotSpotFramesTest, EndsWhereAsyncGetCallTraceEnds) {
  // Loading a subclass deoptimizes cDeoptimized while it waits for the probe;
  // AsyncGetCallTrace stops at a frame whose caller awaits deoptimization, and the
  // classifier must agree to type what it did return.
  const Mode mode = GetParam().mode;
  JvmRun r = run({"deoptimized"});
  Frames expected(mode);
  expected.native("probe");
  if (mode == Mode::kInterpreter) {
    expected.interpreted("cDeoptimized").interpreted("iDriveDeoptimized").bottom();
  }
  EXPECT_EQ(r.results["deoptimized"], expected.text());
}

TEST_P(HotSpotFramesTest, GivesUpOnFramesThatDoNotMatch) {
  if (GetParam().mode == Mode::kInterpreter) {
    GTEST_SKIP() << "interpreted frames run Java and native methods alike: the types come from the trace";
  }
  JvmRun r = run({"giveup"});
  EXPECT_EQ(r.results["giveup"],
            "intact=classified missing_frame=unknown extra_frame=unknown native_as_java=unknown "
            "java_as_native=unknown other_thread=unknown no_frames=unknown");
}

INSTANTIATE_TEST_SUITE_P(Jvms, HotSpotFramesTest,
                         ::testing::Values(Config{17, Mode::kInterpreter}, Config{17, Mode::kC2}, Config{17, Mode::kC1},
                                           Config{25, Mode::kInterpreter}, Config{25, Mode::kC2},
                                           Config{25, Mode::kC1}),
                         [](const auto& info) { return config_name(info.param); });

TEST(HotSpotFramesStartup, InterpretedWithDefaultOptions) {
  // A JVM as users start it, the probe called once at startup.
  std::string home = jdk_home(17);
  ASSERT_FALSE(home.empty()) << "JDK 17 is required at " NMPROF_TEST_JDK17;
  JvmRun r = run_target(home, {}, {"interpreted"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.results["interpreted"], Frames(Mode::kInterpreter)
                                          .native("probe")
                                          .interpreted("iInterpretedLeaf")
                                          .interpreted("iInterpretedCaller")
                                          .bottom());
}

TEST(HotSpotFramesVirtualThread, TypesTheVirtualAndTheCarrierFrames) {
  std::string home = jdk_home(25);
  if (home.empty()) GTEST_SKIP() << "JDK 25 is not installed";
  JvmRun r = run_target(home, mode_options(Mode::kC2), {"virtual"});
  ASSERT_EQ(r.status, 0) << r.err;
  // AsyncGetCallTrace walks on from the virtual thread's frames into its carrier's,
  // whose types depend on what the JDK compiled; the walk must agree throughout.
  const std::string& report = r.results["virtual"];
  EXPECT_TRUE(report.starts_with("FramesTarget.probe:native FramesTarget.iVirtualBody:interpreted ")) << report;
  EXPECT_NE(report.find(" Continuation.enterSpecial:native "), std::string::npos) << report;
}

}  // namespace
