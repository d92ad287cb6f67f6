// Paths into the target (reading and removing files there is exercised against real
// JVMs in hotspot_vm_test.cpp).
#include "attach/target_files.h"
#include "attach/target_tmp.h"

#include <gtest/gtest.h>

namespace nmprof::attach {
namespace {

TEST(ClientPath, GoesThroughTheTargetsRootOrWorkingDirectory) {
  TargetProcess target;
  target.pid = 4242;
  EXPECT_EQ(client_path(target, "/tmp/leak.jfr"), "/proc/4242/root/tmp/leak.jfr");
  EXPECT_EQ(client_path(target, "out/leak.jfr"), "/proc/4242/cwd/out/leak.jfr");
}

TEST(TargetTmp, MakesUnpredictableNamesInItsDirectory) {
  TargetTmp tmp{UniqueFd(), "/nmprof-tmp-0", "/proc/4242/root/nmprof-tmp-0", UniqueFd()};
  std::string a = tmp.unpredictable_path("nmprof-reply-", ".x");
  std::string b = tmp.unpredictable_path("nmprof-reply-", ".x");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), std::string("/nmprof-tmp-0/nmprof-reply-").size() + 26 + 2);
  EXPECT_EQ(a.substr(0, 27), "/nmprof-tmp-0/nmprof-reply-");
}

}  // namespace
}  // namespace nmprof::attach
