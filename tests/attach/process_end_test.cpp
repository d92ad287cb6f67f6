// How a process nmprof is not the parent of ended: read from its zombie, as long as
// its parent (here the test) has not reaped it.
#include "attach/process_end.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

namespace nmprof::attach {
namespace {

using std::chrono::milliseconds;

// A child that waits to be killed, or exits with `status` at once (status >= 0).
pid_t child(int status) {
  pid_t pid = fork();
  if (pid == 0) {
    if (status >= 0) _exit(status);
    for (;;) pause();
  }
  return pid;
}

bool ended_within_a_minute(ProcessEnd& end) {
  for (int i = 0; i < 600; i++)
    if (end.ended(milliseconds(100))) return true;
  return false;
}

TEST(ProcessEnd, SaysWhichSignalKilledTheProcess) {
  pid_t pid = child(-1);
  ProcessEnd end(pid);
  EXPECT_FALSE(end.ended(milliseconds(50)));
  kill(pid, SIGKILL);
  ASSERT_TRUE(ended_within_a_minute(end));
  EXPECT_TRUE(end.killed());
  EXPECT_EQ(end.how(), "was killed by signal 9 (SIGKILL)");
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(end.ended()) << "stays ended once reaped";
  EXPECT_EQ(end.how(), "was killed by signal 9 (SIGKILL)");
}

TEST(ProcessEnd, SaysTheExitStatus) {
  for (int status : {3, 0}) {
    pid_t pid = child(status);
    ProcessEnd end(pid);
    ASSERT_TRUE(ended_within_a_minute(end));
    EXPECT_FALSE(end.killed());
    EXPECT_EQ(end.how(), "exited with status " + std::to_string(status));
    waitpid(pid, nullptr, 0);
  }
}

TEST(ProcessEnd, ReapedBeforeItWasSeenItHasEnded) {
  pid_t pid = child(-1);
  ProcessEnd end(pid);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(end.ended());
  EXPECT_FALSE(end.killed());
  EXPECT_EQ(end.how(), "has ended");
}

}  // namespace
}  // namespace nmprof::attach
