// Processes for the attach tests: JVMs running AttachTarget from a given JDK,
// optionally as another user or in their own PID and mount namespaces, and a plain
// `sleep`. All are stopped again (destructor; PR_SET_PDEATHSIG if the test dies).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nmprof::attach::test {

// A directory under /var/tmp that every test JVM can read, whatever its user and
// even with a private /tmp: AttachTarget.class and the test agent. Removed at exit.
const std::string& workspace();
// The test agent's path in the workspace (libtestagent.so).
const std::string& test_agent();
// A copy of the test agent under another name, for tests that need a library the
// JVM has not loaded yet.
std::string test_agent_copy(const std::string& file_name);

// The JDK's home directory, or "" if it is not installed (17 is required).
std::string jdk_home(int feature_version);

// The uid and gid of the system user "nmprof-test", created with useradd (package
// passwd) if needed; nullopt if that fails (not root).
std::optional<std::pair<uid_t, gid_t>> test_user();

struct JvmLaunch {
  int jdk = 17;
  std::vector<std::string> options{};             // JVM options before the main class
  std::optional<std::pair<uid_t, gid_t>> user{};  // run as this uid/gid (needs root)
  bool private_namespaces = false;                // own PID + mount namespace, tmpfs on /tmp
};

class TestJvm {
 public:
  // Starts the JVM and waits until its main() runs; nullptr with `error` set on failure.
  static std::unique_ptr<TestJvm> start(const JvmLaunch& launch, std::string& error);
  ~TestJvm();

  pid_t pid() const { return jvm_; }  // as the test sees it
  std::string stdout_text() const;
  std::string stderr_text() const;

 private:
  TestJvm(pid_t child, pid_t jvm, std::string output_prefix) : child_(child), jvm_(jvm), output_(output_prefix) {}
  bool reaped();  // true once the forked child has exited (and was waited for)

  pid_t child_;  // what the test forked: the JVM, or the namespace's parent
  pid_t jvm_;
  bool reaped_ = false;
  std::string output_;  // stdout/stderr files are <output_>.out / .err
};

// `sleep 60`, optionally as another user (needs root).
class Sleeper {
 public:
  explicit Sleeper(std::optional<std::pair<uid_t, gid_t>> user = std::nullopt);
  ~Sleeper();
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

// One JVM per JDK with default options, shared by the tests that do not need their
// own; nullptr (with `error`) if it cannot start.
TestJvm* shared_jvm(int jdk, std::string& error);

}  // namespace nmprof::attach::test
