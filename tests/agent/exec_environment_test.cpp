// The environment an exec passes on gets the agent's variables back when it lost them.
#include "agent/hooks/exec_environment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nmprof::exec_environment {
namespace {

constexpr char kLibrary[] = "/opt/nmprof/lib/nmprof/libnmprof.so";

// The environment an exec of `entries` gets, as strings; `same` says whether envp
// itself went.
std::vector<std::string> passed(std::vector<const char*> entries, bool* same = nullptr) {
  entries.push_back(nullptr);
  auto envp = const_cast<char* const*>(entries.data());
  std::vector<std::string> out;
  size_t room = room_needed(envp);
  if (same) *same = room == 0;
  std::vector<char> buffer(room + 1);
  char* const* result = room ? with_agent(envp, buffer.data()) : envp;
  for (size_t i = 0; result[i]; i++) out.emplace_back(result[i]);
  return out;
}

class ExecEnvironment : public ::testing::Test {
 protected:
  void SetUp() override { remember(kLibrary, "nativemem=0,file=/tmp/x/%p.jfr"); }
  void TearDown() override { remember("", ""); }
};

TEST_F(ExecEnvironment, AnEnvironmentThatStillPreloadsTheAgentGoesAsItIs) {
  bool same = false;
  passed({"HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so.2:/opt/nmprof/lib/nmprof/libnmprof.so",
          "NMPROF_OPTIONS=nativemem=1m"},
         &same);
  EXPECT_TRUE(same);
}

TEST_F(ExecEnvironment, ALauncherPreloadingItsAllocatorKeepsItAndTheAgentComesAfter) {
  EXPECT_EQ(passed({"HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so.2", "NMPROF_OPTIONS=nativemem=1m"}),
            (std::vector<std::string>{"HOME=/root", "NMPROF_OPTIONS=nativemem=1m",
                                      "LD_PRELOAD=/usr/lib/libjemalloc.so.2:/opt/nmprof/lib/nmprof/libnmprof.so"}));
}

TEST_F(ExecEnvironment, AnEnvironmentOfItsOwnGetsBothVariables) {
  EXPECT_EQ(passed({"PATH=/bin"}),
            (std::vector<std::string>{"PATH=/bin", "LD_PRELOAD=/opt/nmprof/lib/nmprof/libnmprof.so",
                                      "NMPROF_OPTIONS=nativemem=0,file=/tmp/x/%p.jfr"}));
  EXPECT_EQ(passed({}).size(), 2u);
  EXPECT_EQ(room_needed(nullptr) > 0, true);  // execve(path, argv, NULL): an empty environment
}

TEST_F(ExecEnvironment, NamesThatOnlyLookAlikeAreNotTheAgent) {
  EXPECT_EQ(passed({"LD_PRELOAD=/x/notlibnmprof.so", "NMPROF_OPTIONS_X=1", "NMPROF_OPTIONS=a"})[2],
            "LD_PRELOAD=/x/notlibnmprof.so:/opt/nmprof/lib/nmprof/libnmprof.so");
  EXPECT_TRUE(preload_names("libnmprof.so", "libnmprof.so"));
  EXPECT_TRUE(preload_names("/a/b.so /c/libnmprof.so", "libnmprof.so"));
  EXPECT_FALSE(preload_names("/c/libnmprof.so.1", "libnmprof.so"));
  EXPECT_FALSE(preload_names("", "libnmprof.so"));
}

TEST_F(ExecEnvironment, AnEnvironmentTooLargeForASmallStackGoesAsItIs) {
  std::vector<std::string> names(1100);
  std::vector<const char*> entries;
  for (size_t i = 0; i < names.size(); i++) entries.push_back((names[i] = "V" + std::to_string(i) + "=1").c_str());
  bool same = false;
  passed(entries, &same);
  EXPECT_TRUE(same);
}

TEST(ExecEnvironmentUnremembered, AnAgentNotStartedFromItsEnvironmentChangesNothing) {
  remember("", "");
  bool same = false;
  passed({"PATH=/bin"}, &same);
  EXPECT_TRUE(same);
}

}  // namespace
}  // namespace nmprof::exec_environment
