// Paths into the target and the owner of copied-out files (copying itself is
// exercised against real JVMs in hotspot_vm_test.cpp).
#include "attach/target_files.h"

#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace nmprof::attach {
namespace {

TEST(ClientPath, GoesThroughTheTargetsRootOrWorkingDirectory) {
  TargetProcess target;
  target.pid = 4242;
  EXPECT_EQ(client_path(target, "/tmp/leak.jfr"), "/proc/4242/root/tmp/leak.jfr");
  EXPECT_EQ(client_path(target, "out/leak.jfr"), "/proc/4242/cwd/out/leak.jfr");
}

// Restores an environment variable when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(InvokingUser, IsTheSudoUserWhenRootUnderSudo) {
  ScopedEnv uid("SUDO_UID", "1234");
  ScopedEnv gid("SUDO_GID", "5678");
  FileOwner owner = invoking_user();
  if (geteuid() == 0) {
    EXPECT_EQ(owner.uid, 1234u);
    EXPECT_EQ(owner.gid, 5678u);
  } else {  // without root, SUDO_* cannot be honoured
    EXPECT_EQ(owner.uid, getuid());
    EXPECT_EQ(owner.gid, getgid());
  }
}

TEST(InvokingUser, IsTheRealUserOtherwise) {
  ScopedEnv uid("SUDO_UID", nullptr);
  ScopedEnv gid("SUDO_GID", "5678");
  FileOwner owner = invoking_user();
  EXPECT_EQ(owner.uid, getuid());
  EXPECT_EQ(owner.gid, getgid());
  ScopedEnv bad_uid("SUDO_UID", "12x");
  EXPECT_EQ(invoking_user().uid, getuid());
}

}  // namespace
}  // namespace nmprof::attach
