#include "tests/attach/test_processes.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace nmprof::attach::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Workspace {
  std::string dir;
  std::string agent;

  Workspace() {
    char name[] = "/var/tmp/nmprof-attach-test-XXXXXX";
    if (!mkdtemp(name)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    chmod(name, 0755);
    dir = name;
    agent = dir + "/libtestagent.so";
    fs::copy_file(NMPROF_TEST_CLASS_DIR "/AttachTarget.class", dir + "/AttachTarget.class");
    fs::copy_file(NMPROF_TEST_AGENT, agent);
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

Workspace& the_workspace() {
  static Workspace workspace;
  return workspace;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

[[noreturn]] void fail(int report) {
  int value = -errno;
  (void)!write(report, &value, sizeof value);
  _exit(127);
}

// In the forked child: set up what `launch` asks for and exec the JVM. Failures are
// reported as -errno on `report`; in a private namespace the JVM's pid is sent there.
[[noreturn]] void run_child(const JvmLaunch& launch, const std::vector<std::string>& args, int out, int err,
                            int report) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (launch.private_namespaces) {
    if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) fail(report);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail(report);
    pid_t jvm = fork();
    if (jvm < 0) fail(report);
    if (jvm > 0) {
      (void)!write(report, &jvm, sizeof jvm);
      close(report);
      int status = 0;
      waitpid(jvm, &status, 0);
      _exit(0);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // PID 1 of the new namespace: dies with its parent
    if (mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") != 0) fail(report);
  }
  if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) fail(report);
  // Not writable by another user: that JVM's trigger file must go to /tmp instead.
  if (chdir(the_workspace().dir.c_str()) != 0) fail(report);
  if (launch.user) {
    auto [uid, gid] = *launch.user;
    if (setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) fail(report);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // cleared by the credential change
  }
  unsetenv("JAVA_TOOL_OPTIONS");
  unsetenv("JDK_JAVA_OPTIONS");
  unsetenv("_JAVA_OPTIONS");
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  fail(report);
}

}  // namespace

const std::string& workspace() { return the_workspace().dir; }

const std::string& test_agent() { return the_workspace().agent; }

std::string test_agent_copy(const std::string& file_name) {
  std::string path = workspace() + "/" + file_name;
  fs::copy_file(test_agent(), path, fs::copy_options::overwrite_existing);
  return path;
}

std::string jdk_home(int feature_version) {
  std::string home = feature_version == 17 ? NMPROF_TEST_JDK17 : feature_version == 25 ? NMPROF_TEST_JDK25 : "";
  return !home.empty() && access((home + "/bin/java").c_str(), X_OK) == 0 ? home : "";
}

std::optional<std::pair<uid_t, gid_t>> test_user() {
  constexpr const char* kName = "nmprof-test";
  if (!getpwnam(kName) && geteuid() == 0) {
    (void)!std::system("useradd --system --user-group --no-create-home --home-dir /nonexistent "
                       "--shell /usr/sbin/nologin nmprof-test");
  }
  const passwd* user = getpwnam(kName);
  if (!user) return std::nullopt;
  return std::pair{user->pw_uid, user->pw_gid};
}

std::unique_ptr<TestJvm> TestJvm::start(const JvmLaunch& launch, std::string& error) {
  std::string home = jdk_home(launch.jdk);
  if (home.empty()) {
    error = "JDK " + std::to_string(launch.jdk) + " is not installed";
    return nullptr;
  }
  std::vector<std::string> args = {home + "/bin/java", "-Xmx64m", "-XX:+UseSerialGC", "-XX:-UsePerfData"};
  args.insert(args.end(), launch.options.begin(), launch.options.end());
  args.insert(args.end(), {"-cp", workspace(), "AttachTarget"});

  static int launches = 0;
  std::string output = workspace() + "/jvm-" + std::to_string(++launches);
  int out = open((output + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = open((output + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int report[2];
  if (out < 0 || err < 0 || pipe2(report, O_CLOEXEC) != 0) {
    error = std::string("cannot prepare the JVM's output files: ") + std::strerror(errno);
    return nullptr;
  }
  pid_t child = fork();
  if (child == 0) run_child(launch, args, out, err, report[1]);
  close(out);
  close(err);
  close(report[1]);
  int value = 0;
  ssize_t n = read(report[0], &value, sizeof value);
  close(report[0]);
  if (child < 0 || (n == sizeof value && value < 0)) {
    error = std::string("cannot start the JVM: ") + std::strerror(child < 0 ? errno : -value);
    if (child > 0) waitpid(child, nullptr, 0);
    return nullptr;
  }
  std::unique_ptr<TestJvm> jvm(new TestJvm(child, n == sizeof value ? value : child, output));

  auto deadline = std::chrono::steady_clock::now() + 60s;  // a loaded machine starts JVMs slowly
  while (jvm->stdout_text().find("ready\n") == std::string::npos) {
    if (jvm->reaped() || std::chrono::steady_clock::now() > deadline) {
      error = "the JVM did not start: " + jvm->stderr_text();
      return nullptr;
    }
    std::this_thread::sleep_for(10ms);
  }
  return jvm;
}

bool TestJvm::reaped() {
  if (!reaped_) reaped_ = waitpid(child_, nullptr, WNOHANG) == child_;
  return reaped_;
}

TestJvm::~TestJvm() {
  if (reaped()) return;
  // SIGCONT first: a test may have stopped it.
  kill(jvm_, SIGCONT);
  kill(jvm_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!reaped()) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(jvm_, SIGKILL);
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
      unlink(("/tmp/.java_pid" + std::to_string(jvm_)).c_str());  // SIGKILL leaves the socket behind
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
}

std::string TestJvm::stdout_text() const { return read_file(output_ + ".out"); }

std::string TestJvm::stderr_text() const { return read_file(output_ + ".err"); }

Sleeper::Sleeper(std::optional<std::pair<uid_t, gid_t>> user) {
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (user && (setgroups(0, nullptr) != 0 || setresgid(user->second, user->second, user->second) != 0 ||
                 setresuid(user->first, user->first, user->first) != 0)) {
      _exit(127);
    }
    execl("/bin/sleep", "sleep", "60", nullptr);
    _exit(127);
  }
  // Wait for the exec, so that the process is what the test expects.
  std::string comm = "/proc/" + std::to_string(pid_) + "/comm";
  for (int i = 0; i < 1000 && read_file(comm) != "sleep\n"; i++) std::this_thread::sleep_for(2ms);
}

Sleeper::~Sleeper() {
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

TestJvm* shared_jvm(int jdk, std::string& error) {
  struct Shared {
    std::unique_ptr<TestJvm> jvm;
    std::string error;
  };
  the_workspace();  // constructed first, so it is removed after the JVMs have stopped
  static std::map<int, Shared> shared;
  auto [entry, inserted] = shared.try_emplace(jdk);
  if (inserted) entry->second.jvm = TestJvm::start(JvmLaunch{.jdk = jdk}, entry->second.error);
  error = entry->second.error;
  return entry->second.jvm.get();
}

}  // namespace nmprof::attach::test
