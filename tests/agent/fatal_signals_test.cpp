// The fatal-signal handlers, each case in a forked child so the signals are real.
#include "agent/safety/fatal_signals.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace nmprof {
namespace {

// Runs `body` in a child and returns its wait status (-1 if it did not end in 20 s).
template <typename Body>
int status_of_child(Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit no_core = {0, 0};  // no core files in the build directory
    setrlimit(RLIMIT_CORE, &no_core);
    body();
    _exit(0);
  }
  for (int waited = 0; waited < 200; waited++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    usleep(100000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// Where the flush leaves its mark: the pipe's write end, in the child.
int g_flushed_fd = -1;

bool flush_marks() {
  char x = 'f';
  return write(g_flushed_fd, &x, 1) == 1;
}

bool flush_hangs() {
  for (;;) pause();
}

struct Ending {
  int status;
  int flushes;
};

// status_of_child, and how often flush_marks ran in the child.
template <typename Body>
Ending ending_of_child(Body body) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, 0};
  int status = status_of_child([&] {
    g_flushed_fd = fds[1];
    body();
  });
  close(fds[1]);
  char buf[16];
  ssize_t n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  return {status, n > 0 ? static_cast<int>(n) : 0};
}

void fault() {
  static volatile uintptr_t unmapped = 16;
  *reinterpret_cast<volatile int*>(unmapped) = 1;
}

// abort() raises SIGABRT (sent again after the write); a fault returns to the
// faulting instruction, which faults again at the default action.
TEST(FatalSignals, ACrashWritesOnceAndDiesByTheSameSignal) {
  struct Crash {
    void (*crash)();
    int signo;
  };
  for (Crash c : {Crash{abort, SIGABRT}, Crash{fault, SIGSEGV}}) {
    Ending end = ending_of_child([&] {
      install_fatal_handlers(flush_marks);
      c.crash();
    });
    ASSERT_TRUE(WIFSIGNALED(end.status)) << end.status;
    EXPECT_EQ(WTERMSIG(end.status), c.signo);
    EXPECT_EQ(end.flushes, 1);
  }
}

TEST(FatalSignals, AWriteThatHangsDoesNotKeepTheProcessAlive) {
  int status = status_of_child([] {
    install_fatal_handlers(flush_hangs);
    raise(SIGBUS);
  });
  ASSERT_NE(status, -1) << "the process hung";
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGBUS);
}

void recovers(int) {}  // returning from a raised signal: handled

TEST(FatalSignals, AHandlerInstalledBeforeIsCalledFirstAndMayHandleTheSignal) {
  Ending end = ending_of_child([] {
    signal(SIGFPE, recovers);
    install_fatal_handlers(flush_marks);
    raise(SIGFPE);
    _exit(7);
  });
  ASSERT_TRUE(WIFEXITED(end.status)) << end.status;
  EXPECT_EQ(WEXITSTATUS(end.status), 7);
  EXPECT_EQ(end.flushes, 0);
}

TEST(FatalSignals, IgnoredSignalsAndRemovedHandlersAreLeftAsTheyWere) {
  int status = status_of_child([] {
    signal(SIGILL, SIG_IGN);
    install_fatal_handlers(flush_hangs);
    struct sigaction now;
    sigaction(SIGILL, nullptr, &now);
    if (now.sa_handler != SIG_IGN) _exit(1);
    remove_fatal_handlers();
    sigaction(SIGSEGV, nullptr, &now);
    if (now.sa_handler != SIG_DFL || (now.sa_flags & SA_SIGINFO)) _exit(2);
    _exit(3);
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

}  // namespace
}  // namespace nmprof
