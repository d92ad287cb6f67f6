// The helper that acts in the target's place.
#include "attach/as_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>

#include "tests/attach/test_processes.h"

namespace nmprof::attach {
namespace {

TEST(RunAsTarget, HelperHasTheTargetsCredentials) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  auto user = test::test_user();
  ASSERT_TRUE(user) << "cannot create the user nmprof-test";
  test::Sleeper sleeper(user);
  auto target = inspect_process(sleeper.pid());
  ASSERT_TRUE(target) << target.error().message;

  std::string name = "tmp/nmprof-as-target-" + std::to_string(sleeper.pid());
  auto created = run_as_target(*target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    UniqueFd fd(openat(dirs.root, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600));
    if (!fd) return Error{std::strerror(errno)};
    return fd;
  });
  ASSERT_TRUE(created) << created.error().message;
  struct stat st {};
  ASSERT_EQ(fstat(created->get(), &st), 0);
  unlink(("/" + name).c_str());
  EXPECT_EQ(st.st_uid, user->first);
  EXPECT_EQ(st.st_gid, user->second);
}

// Issue 15, finding 8: with a root target (a container without a user namespace) the
// helper would otherwise keep every capability of the host's root.
TEST(RunAsTarget, HelperHasNoCapabilitiesEvenForARootTarget) {
  auto self = inspect_process(getpid());
  ASSERT_TRUE(self) << self.error().message;
  auto status = run_as_target(*self, [](const TargetDirs&) -> Result<UniqueFd> {
    auto text = read_text_at(AT_FDCWD, "/proc/self/status");
    if (!text) return Error{"cannot read /proc/self/status"};
    for (const char* line : {"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000",
                             "NoNewPrivs:\t1"})
      if (text->find(line) == std::string::npos && (geteuid() == 0 || std::string(line).rfind("CapBnd", 0) != 0))
        return Error{std::string("missing ") + line + " in\n" + *text};
    return UniqueFd();
  });
  EXPECT_TRUE(status) << status.error().message;
}

// Issue 15, finding 6: the target's user can stop the helper; nmprof must not wait forever.
TEST(RunAsTarget, AStoppedHelperIsKilledAfterTheTimeout) {
  auto self = inspect_process(getpid());
  ASSERT_TRUE(self) << self.error().message;
  std::string mark = "/tmp/nmprof-cleanup-test-" + std::to_string(getpid());
  auto stopped = run_as_target(
      *self, [](const TargetDirs&) -> Result<UniqueFd> { raise(SIGSTOP); return UniqueFd(); },
      std::chrono::milliseconds(300),
      [&](const TargetDirs&) -> Result<UniqueFd> { return UniqueFd(open(mark.c_str(), O_CREAT | O_WRONLY, 0600)); });
  ASSERT_FALSE(stopped);
  EXPECT_NE(stopped.error().message.find("was killed by signal 9 without an answer (within 300 ms)"), std::string::npos)
      << stopped.error().message;
  EXPECT_EQ(unlink(mark.c_str()), 0) << "the cleanup job did not run";
}

TEST(RunAsTarget, HandsBackErrorsAndJobsWithoutDescriptor) {
  auto self = inspect_process(getpid());
  ASSERT_TRUE(self) << self.error().message;
  auto failed = run_as_target(*self, [](const TargetDirs&) -> Result<UniqueFd> { return Error{"from the helper"}; });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "from the helper");

  auto nothing = run_as_target(*self, [](const TargetDirs& dirs) -> Result<UniqueFd> {
    return dirs.proc >= 0 && dirs.root >= 0 && dirs.cwd >= 0 ? Result<UniqueFd>(UniqueFd()) : Error{"no dirs"};
  });
  ASSERT_TRUE(nothing) << nothing.error().message;
  EXPECT_FALSE(*nothing);
}

TEST(RunAsTarget, ReportsAHelperThatDiesWithoutAnswer) {
  auto self = inspect_process(getpid());
  ASSERT_TRUE(self) << self.error().message;
  auto died = run_as_target(*self, [](const TargetDirs&) -> Result<UniqueFd> { _exit(3); });
  ASSERT_FALSE(died);
  EXPECT_EQ(died.error().message,
            "the attach helper for process " + std::to_string(getpid()) + " exited with status 3 without an answer");
}

}  // namespace
}  // namespace nmprof::attach
