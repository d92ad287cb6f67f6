// The helper that acts in the target's place.
#include "attach/as_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

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
