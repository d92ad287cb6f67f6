// Attaching to real HotSpot JVMs (JDK 17 always, JDK 25 when installed): loading
// the test agent, jcmd, the JEP 451 forecast, other users, containers and every
// error nmprof reports.
#include "attach/hotspot_vm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "attach/dynamic_load_warning.h"
#include "attach/target_files.h"
#include "tests/attach/test_processes.h"

namespace nmprof::attach {
namespace {

using namespace std::chrono_literals;
using test::JvmLaunch;
using test::TestJvm;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
#define EXPECT_LACKS(text, part) EXPECT_EQ(std::string(text).find(part), std::string::npos) << (text)

constexpr const char* kWarning = "WARNING: A JVM TI agent has been loaded dynamically";

// Generous for slow CI machines and for machines running many test suites at once
// (a fresh JVM competing for the CPU can take seconds to start its listener); the
// timeout tests use short ones.
const AttachTimeouts kTimeouts{30s, 60s};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_fd(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  return text;
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// A fresh output file for the test agent, in the workspace.
std::string output_file(const std::string& name) {
  std::string path = test::workspace() + "/" + name + ".txt";
  unlink(path.c_str());
  return path;
}

std::string agent_options(int rc, const std::string& out, const std::string& extra = "") {
  return "rc=" + std::to_string(rc) + ",out=" + out + (extra.empty() ? "" : "," + extra);
}

// Skips (JDK 25) or fails (JDK 17 is required) when the JDK is missing.
#define REQUIRE_JDK(version)                                                                         \
  do {                                                                                               \
    if (test::jdk_home(version).empty()) {                                                           \
      if ((version) == 17) FAIL() << "JDK 17 is required (Debian package openjdk-17-jdk-headless)"; \
      GTEST_SKIP() << "JDK " << (version) << " is not installed";                                  \
    }                                                                                                \
  } while (0)

#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root"

std::unique_ptr<TestJvm> start_jvm(const JvmLaunch& launch) {
  std::string error;
  auto jvm = TestJvm::start(launch, error);
  EXPECT_TRUE(jvm) << error;
  return jvm;
}

// Tests that run against each JDK's shared JVM.
class EveryJdk : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    REQUIRE_JDK(jdk());
    std::string error;
    jvm_ = test::shared_jvm(jdk(), error);
    ASSERT_TRUE(jvm_) << error;
    auto vm = HotSpotVm::find(jvm_->pid(), kTimeouts);
    ASSERT_TRUE(vm) << vm.error().message;
    vm_.emplace(std::move(*vm));
  }

  int jdk() const { return GetParam(); }
  std::string output(const std::string& name) const { return output_file(name + "-jdk" + std::to_string(jdk())); }

  TestJvm* jvm_ = nullptr;
  std::optional<HotSpotVm> vm_;
};

INSTANTIATE_TEST_SUITE_P(Jdk, EveryJdk, ::testing::Values(17, 25),
                         [](const auto& info) { return "Jdk" + std::to_string(info.param); });

TEST_P(EveryJdk, LoadsAgentWithItsOptions) {
  std::string out = output("load");
  std::string options = agent_options(0, out, "spaces and = signs, file=/tmp/x.jfr");
  auto code = vm_->load_agent(test::test_agent(), options);
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(read_file(out), options + "\n");
}

TEST_P(EveryJdk, PassesAgentReturnCodeThrough) {
  std::string out = output("return-code");
  auto code = vm_->load_agent(test::test_agent(), agent_options(42, out));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 42);
  EXPECT_EQ(read_file(out), agent_options(42, out) + "\n");
}

TEST_P(EveryJdk, LoadsTwiceIntoOneJvm) {
  std::string out = output("twice");
  auto first = vm_->load_agent(test::test_agent(), agent_options(0, out, "first"));
  auto second = vm_->load_agent(test::test_agent(), agent_options(0, out, "stop"));
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*first, 0);
  EXPECT_EQ(*second, 0);
  EXPECT_EQ(read_file(out), agent_options(0, out, "first") + "\n" + agent_options(0, out, "stop") + "\n");
}

TEST_P(EveryJdk, RunsDiagnosticCommands) {
  auto version = vm_->jcmd("VM.version");
  ASSERT_TRUE(version) << version.error().message;
  EXPECT_CONTAINS(*version, "\nJDK " + std::to_string(jdk()) + ".");

  auto flag = vm_->jcmd("VM.flags -all");
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_CONTAINS(*flag, "EnableDynamicAgentLoading");

  auto unknown = vm_->jcmd("No.such");
  ASSERT_FALSE(unknown);
  EXPECT_CONTAINS(unknown.error().message, "jcmd 'No.such' failed in JVM " + std::to_string(jvm_->pid()));
  EXPECT_CONTAINS(unknown.error().message, "Unknown diagnostic command");
}

TEST_P(EveryJdk, ShowsWhyTheJvmCannotLoadALibrary) {
  auto code = vm_->load_agent("/nonexistent/libnmprof-missing.so", "");
  ASSERT_FALSE(code);
  const std::string& message = code.error().message;
  EXPECT_CONTAINS(message, "could not load /nonexistent/libnmprof-missing.so");
  EXPECT_CONTAINS(message, "/nonexistent/libnmprof-missing.so: cannot open shared object file");
  EXPECT_LACKS(message, "\n");
}

TEST_P(EveryJdk, ForecastsTheDynamicLoadWarning) {
  bool warns = jdk() >= 21;
  std::string agent = test::test_agent_copy("libforecast-jdk" + std::to_string(jdk()) + ".so");
  auto before = forecast_dynamic_load_warning(*vm_, agent);
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_EQ(before->jdk_version, jdk());
  EXPECT_EQ(before->printed, warns);

  auto code = vm_->load_agent(agent, agent_options(0, output("forecast")));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(jvm_->stderr_text().find(std::string(kWarning) + " (" + agent + ")") != std::string::npos, warns)
      << jvm_->stderr_text();

  auto after = forecast_dynamic_load_warning(*vm_, agent);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_FALSE(after->printed);  // only the first load of a library warns
}

TEST_P(EveryJdk, RefusesLoadWhenDynamicLoadingIsDisabled) {
  auto jvm = start_jvm({.jdk = jdk(), .options = {"-XX:-EnableDynamicAgentLoading"}});
  ASSERT_TRUE(jvm);
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(vm) << vm.error().message;

  auto forecast = forecast_dynamic_load_warning(*vm, test::test_agent());
  ASSERT_TRUE(forecast) << forecast.error().message;
  EXPECT_FALSE(forecast->printed);

  std::string out = output("refused");
  auto code = vm->load_agent(test::test_agent(), agent_options(0, out));
  ASSERT_FALSE(code);
  EXPECT_CONTAINS(code.error().message, "refuses to load agents");
  EXPECT_CONTAINS(code.error().message, "Restart it with -XX:+EnableDynamicAgentLoading");
  EXPECT_CONTAINS(code.error().message, "-agentpath:" + test::test_agent());
  EXPECT_FALSE(exists(out));
}

TEST(Jep451, EnableDynamicAgentLoadingOnTheCommandLineAvoidsTheWarning) {
  REQUIRE_JDK(25);
  auto jvm = start_jvm({.jdk = 25, .options = {"-XX:+EnableDynamicAgentLoading"}});
  ASSERT_TRUE(jvm);
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(vm) << vm.error().message;
  auto forecast = forecast_dynamic_load_warning(*vm, test::test_agent());
  ASSERT_TRUE(forecast) << forecast.error().message;
  EXPECT_EQ(forecast->jdk_version, 25);
  EXPECT_FALSE(forecast->printed);

  auto code = vm->load_agent(test::test_agent(), agent_options(0, output_file("explicit-enable")));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_LACKS(jvm->stderr_text(), kWarning);
}

// Waits until `pid` is stopped (state T): kill() only queues SIGSTOP.
bool wait_until_stopped(pid_t pid) {
  for (int i = 0; i < 1000; i++) {
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    size_t end_of_name = stat.rfind(')');
    if (end_of_name != std::string::npos && stat.compare(end_of_name + 2, 1, "T") == 0) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

TEST(AttachTimeouts, ReplyTimeoutWhenTheJvmDoesNotAnswer) {
  std::string error;
  TestJvm* jvm = test::shared_jvm(17, error);
  ASSERT_TRUE(jvm) << error;
  // The listener runs (asked with patience: a loaded machine may take longer than
  // 300 ms to answer): connect succeeds below, only the reply never comes.
  auto patient = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(patient) << patient.error().message;
  ASSERT_TRUE(patient->jcmd("VM.uptime"));
  auto vm = HotSpotVm::find(jvm->pid(), {10s, 300ms});
  ASSERT_TRUE(vm) << vm.error().message;

  ASSERT_EQ(kill(jvm->pid(), SIGSTOP), 0);
  bool stopped_in_time = wait_until_stopped(jvm->pid());
  auto stopped = vm->jcmd("VM.uptime");
  kill(jvm->pid(), SIGCONT);
  ASSERT_TRUE(stopped_in_time);
  ASSERT_FALSE(stopped);
  EXPECT_CONTAINS(stopped.error().message, "did not answer the 'jcmd VM.uptime' request within 300 ms");

  auto again = patient->jcmd("VM.uptime");
  EXPECT_TRUE(again) << again.error().message;
}

TEST(AttachErrors, AttachDisabledOnTheCommandLine) {
  REQUIRE_JDK(17);
  auto jvm = start_jvm({.options = {"-XX:+DisableAttachMechanism"}});
  ASSERT_TRUE(jvm);
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_FALSE(vm);
  EXPECT_CONTAINS(vm.error().message, "was started with -XX:+DisableAttachMechanism");
  EXPECT_CONTAINS(vm.error().message, "nmprof run");
  EXPECT_LACKS(jvm->stdout_text(), "Full thread dump");  // it was not sent SIGQUIT
}

TEST(AttachErrors, ListenerTimeoutWhenAttachIsDisabledOutOfSight) {
  REQUIRE_JDK(17);
  std::string options_file = test::workspace() + "/disable-attach.options";
  std::ofstream(options_file) << "-XX:+DisableAttachMechanism\n";
  auto jvm = start_jvm({.options = {"-XX:VMOptionsFile=" + options_file}});
  ASSERT_TRUE(jvm);
  auto vm = HotSpotVm::find(jvm->pid(), {500ms, 1s});
  ASSERT_TRUE(vm) << vm.error().message;

  auto start = std::chrono::steady_clock::now();
  auto version = vm->jcmd("VM.version");
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(version);
  EXPECT_CONTAINS(version.error().message, "did not open its attach socket");
  EXPECT_CONTAINS(version.error().message, "within 500 ms of SIGQUIT");
  EXPECT_CONTAINS(version.error().message, "-XX:+DisableAttachMechanism");
  EXPECT_GE(waited, 500ms);

  std::string nspid = std::to_string(jvm->pid());
  EXPECT_FALSE(exists("/proc/" + nspid + "/cwd/.attach_pid" + nspid));
  EXPECT_FALSE(exists("/tmp/.attach_pid" + nspid));
  // SIGQUIT did reach it: without an attach mechanism it prints a thread dump instead.
  for (int i = 0; i < 200 && jvm->stdout_text().find("Full thread dump") == std::string::npos; i++) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_CONTAINS(jvm->stdout_text(), "Full thread dump");
}

TEST(AttachErrors, ProcessThatIsNotAJvm) {
  test::Sleeper sleeper;
  auto vm = HotSpotVm::find(sleeper.pid());
  ASSERT_FALSE(vm);
  EXPECT_CONTAINS(vm.error().message, "process " + std::to_string(sleeper.pid()) + " (sleep) is not a Java VM");
  EXPECT_CONTAINS(vm.error().message, "`nmprof run -- <command>`");
}

TEST(AttachErrors, PidWithoutProcess) {
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  auto vm = HotSpotVm::find(gone);
  ASSERT_FALSE(vm);
  EXPECT_CONTAINS(vm.error().message, "no such process: " + std::to_string(gone));
}

TEST(AttachErrors, RelativeLibraryPath) {
  std::string error;
  TestJvm* jvm = test::shared_jvm(17, error);
  ASSERT_TRUE(jvm) << error;
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(vm) << vm.error().message;
  auto code = vm->load_agent("libtestagent.so", "");
  ASSERT_FALSE(code);
  EXPECT_CONTAINS(code.error().message, "'libtestagent.so' must be absolute");
}

TEST(AttachErrors, NonRootClientOfAnotherUsersJvm) {
  REQUIRE_ROOT();
  auto user = test::test_user();
  ASSERT_TRUE(user) << "cannot create the user nmprof-test";
  std::string error;
  TestJvm* jvm = test::shared_jvm(17, error);  // runs as root
  ASSERT_TRUE(jvm) << error;

  int channel[2];
  ASSERT_EQ(pipe(channel), 0);
  pid_t client = fork();
  if (client == 0) {
    close(channel[0]);
    std::string message = "could not drop privileges";
    if (setresgid(user->second, user->second, user->second) == 0 && setresuid(user->first, user->first, user->first) == 0) {
      auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
      message = vm ? "attached" : vm.error().message;
    }
    (void)!write(channel[1], message.data(), message.size());
    _exit(0);
  }
  close(channel[1]);
  std::string message;
  char buffer[1024];
  for (ssize_t n; (n = read(channel[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
  close(channel[0]);
  waitpid(client, nullptr, 0);
  EXPECT_CONTAINS(message, "permission denied: JVM " + std::to_string(jvm->pid()) + " runs as user 'root' (uid 0, gid 0)");
  EXPECT_CONTAINS(message, "run nmprof as that user or as root");
}

TEST(OtherUser, AttachesAndCopiesTheOutputBack) {
  REQUIRE_ROOT();
  REQUIRE_JDK(17);
  auto user = test::test_user();
  ASSERT_TRUE(user) << "cannot create the user nmprof-test";
  auto jvm = start_jvm({.user = user});
  ASSERT_TRUE(jvm);
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(vm) << vm.error().message;
  EXPECT_EQ(vm->process().status.euid, user->first);

  // Its working directory (the workspace) is not writable for it: the trigger goes to /tmp.
  std::string out = "/tmp/nmprof-attach-test-" + std::to_string(jvm->pid()) + ".txt";
  auto code = vm->load_agent(test::test_agent(), agent_options(0, out));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);

  struct stat socket {};
  ASSERT_EQ(stat(("/tmp/.java_pid" + std::to_string(jvm->pid())).c_str(), &socket), 0);
  EXPECT_EQ(socket.st_uid, user->first);
  EXPECT_FALSE(exists("/tmp/.attach_pid" + std::to_string(jvm->pid())));

  auto opened = open_in_target(vm->process(), out);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(read_fd(opened->get()), agent_options(0, out) + "\n");

  auto removed = remove_from_target(vm->process(), out, opened->get());
  EXPECT_TRUE(removed) << removed.error().message;
  EXPECT_FALSE(exists(out));
}

TEST(Container, AttachesToJvmInItsOwnPidAndMountNamespace) {
  REQUIRE_ROOT();
  REQUIRE_JDK(17);
  std::string error;
  auto jvm = TestJvm::start({.private_namespaces = true}, error);
  if (!jvm && error.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << error;
  ASSERT_TRUE(jvm) << error;
  auto vm = HotSpotVm::find(jvm->pid(), kTimeouts);
  ASSERT_TRUE(vm) << vm.error().message;
  EXPECT_EQ(vm->process().nspid, 1);

  std::string out = "/tmp/nmprof-ns-agent-" + std::to_string(jvm->pid()) + ".txt";
  auto code = vm->load_agent(test::test_agent(), agent_options(0, out));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_FALSE(exists(out));  // written to the JVM's private /tmp
  EXPECT_EQ(read_file(client_path(vm->process(), out)), agent_options(0, out) + "\n");

  std::string root = "/proc/" + std::to_string(jvm->pid()) + "/root";
  struct stat socket {};
  ASSERT_EQ(stat((root + "/tmp/.java_pid1").c_str(), &socket), 0);
  EXPECT_TRUE(S_ISSOCK(socket.st_mode));
  EXPECT_FALSE(exists(root + "/tmp/.attach_pid1"));
  EXPECT_FALSE(exists("/proc/" + std::to_string(jvm->pid()) + "/cwd/.attach_pid1"));

  auto opened = open_in_target(vm->process(), out);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(read_fd(opened->get()), agent_options(0, out) + "\n");

  // A link to "/tmp" inside the container means the container's /tmp, never the host's.
  std::string host_only = "/tmp/nmprof-host-only-" + std::to_string(jvm->pid()) + ".txt";
  std::ofstream(host_only) << "host\n";
  ASSERT_EQ(symlink("/tmp", (root + "/tmp/escape").c_str()), 0);
  auto escaped = open_in_target(vm->process(), "/tmp/escape" + host_only.substr(4), Owner::anyone);
  unlink(host_only.c_str());
  ASSERT_FALSE(escaped);
  EXPECT_CONTAINS(escaped.error().message, "No such file or directory");
}

}  // namespace
}  // namespace nmprof::attach
