// The close family's hooks against the agent's own descriptors: a program's call
// never reaches the agent's file, and does to the program's numbers what it would
// without nmprof.
#include "agent/hooks/descriptor_hooks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "agent/safety/own_descriptors.h"

namespace nmprof {
namespace {

namespace fds = own_descriptors;

bool is_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

ino_t inode_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// The wait status of a child that must end by itself within 5 s (it is killed then).
int status_of(pid_t child) {
  int status = 0;
  for (int waited = 0; waitpid(child, &status, WNOHANG) == 0; waited++) {
    if (waited == 500) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

class DescriptorHooksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Entry point 0 of each hook calls libc's function, as a patched slot bound to it.
    ASSERT_EQ(bind_target(kClose, reinterpret_cast<void*>(&::close)), 0);
    ASSERT_EQ(bind_target(kDup2, reinterpret_cast<void*>(&::dup2)), 0);
    ASSERT_EQ(bind_target(kCloseRange, reinterpret_cast<void*>(&::close_range)), 0);
    ASSERT_EQ(bind_target(kClosefrom, reinterpret_cast<void*>(&::closefrom)), 0);
  }
  void SetUp() override {
    char name[] = "/tmp/nmprof-descriptors-XXXXXX";
    int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = name;
  }
  void TearDown() override { unlink(path_.c_str()); }

  // The agent's output: kept, and the number it has now.
  int keep_file(int* number) {
    int held = fds::open_held(AT_FDCWD, path_.c_str(), O_WRONLY);
    EXPECT_GE(held, 0);
    int kept = fds::keep(held);
    EXPECT_GE(kept, 0);
    *number = fds::acquire(kept);
    fds::release(kept);
    EXPECT_FALSE(is_open(held));  // the held one was closed
    return kept;
  }

  std::string path_;
};

TEST_F(DescriptorHooksTest, TheKeptDescriptorLivesHighAndIsTheFile) {
  int number;
  int kept = keep_file(&number);
  EXPECT_GE(number, 64);
  struct stat named;
  ASSERT_EQ(stat(path_.c_str(), &named), 0);
  EXPECT_EQ(inode_of(number), named.st_ino);
  EXPECT_EQ(fcntl(number, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  fds::close_kept(kept);
  EXPECT_FALSE(is_open(number));
}

TEST_F(DescriptorHooksTest, AProgramsCloseOfTheKeptNumberMovesTheFileAndSaysEbadf) {
  int number;
  int kept = keep_file(&number);
  ino_t file = inode_of(number);
  errno = 0;
  EXPECT_EQ(CloseHook<0>::call(number), -1);
  EXPECT_EQ(errno, EBADF);  // as for a number the program never had
  EXPECT_FALSE(is_open(number));
  int moved = fds::acquire(kept);
  EXPECT_NE(moved, number);
  EXPECT_EQ(inode_of(moved), file);
  EXPECT_EQ(pwrite(moved, "x", 1, 0), 1);
  fds::release(kept);
  fds::close_kept(kept);
  EXPECT_FALSE(is_open(moved));
}

TEST_F(DescriptorHooksTest, Dup2OverTheKeptNumberGivesTheNumberToTheProgram) {
  int number;
  int kept = keep_file(&number);
  ino_t file = inode_of(number);
  int null = open("/dev/null", O_RDONLY);
  ASSERT_GE(null, 0);
  EXPECT_EQ(Dup2Hook<0>::call(null, number), number);
  EXPECT_EQ(inode_of(number), inode_of(null));
  int moved = fds::acquire(kept);
  EXPECT_EQ(inode_of(moved), file);
  fds::release(kept);
  fds::close_kept(kept);
  ::close(number);
  ::close(null);
}

TEST_F(DescriptorHooksTest, CloseRangeAndClosefromCloseEverythingButTheKeptNumber) {
  int number;
  int kept = keep_file(&number);
  int null = open("/dev/null", O_RDONLY);
  int below = fcntl(null, F_DUPFD, number - 10), above = fcntl(null, F_DUPFD, number + 10);
  ASSERT_LT(below, number);
  ASSERT_GT(above, number);
  EXPECT_EQ(CloseRangeHook<0>::call(static_cast<unsigned>(below), ~0U, 0), 0);
  EXPECT_FALSE(is_open(below));
  EXPECT_FALSE(is_open(above));
  EXPECT_TRUE(is_open(number));
  EXPECT_EQ(fds::acquire(kept), number);  // not moved: split around
  fds::release(kept);

  below = fcntl(null, F_DUPFD, number - 10);
  above = fcntl(null, F_DUPFD, number + 10);
  ClosefromHook<0>::call(below);
  EXPECT_FALSE(is_open(below));
  EXPECT_FALSE(is_open(above));
  EXPECT_TRUE(is_open(number));
  fds::close_kept(kept);
  ::close(null);
}

TEST_F(DescriptorHooksTest, ACloseOfAHeldNumberWaitsUntilTheAgentClosedIt) {
  std::atomic<int> held{-1};
  std::atomic<bool> agent_closed{false}, program_closed{false};
  std::thread agent([&] {
    held = fds::open_held(AT_FDCWD, "/dev/null", O_RDONLY);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    agent_closed = true;
    fds::close_held(held);
    // Ends after the program's close: a thread's end may open a descriptor, which
    // takes the freed number (the sanitizers' runtime does: a pipe, in 6% of runs).
    while (!program_closed) std::this_thread::yield();
  });
  while (held < 0) std::this_thread::yield();
  errno = 0;
  int result = CloseHook<0>::call(held);
  int error = errno;
  program_closed = true;
  EXPECT_EQ(result, -1);
  EXPECT_TRUE(agent_closed);
  EXPECT_EQ(error, EBADF);
  agent.join();
}

TEST_F(DescriptorHooksTest, ACallOnANumberThisThreadUsesIsRefused) {
  // A signal handler that interrupted the agent's own write cannot wait for it.
  int number;
  int kept = keep_file(&number);
  EXPECT_EQ(fds::acquire(kept), number);
  errno = 0;
  EXPECT_EQ(CloseHook<0>::call(number), -1);
  EXPECT_EQ(errno, EBADF);
  int null = open("/dev/null", O_RDONLY);
  EXPECT_EQ(Dup2Hook<0>::call(null, number), -1);
  EXPECT_EQ(errno, EBUSY);
  struct stat named;
  ASSERT_EQ(stat(path_.c_str(), &named), 0);
  EXPECT_EQ(inode_of(number), named.st_ino);
  fds::release(kept);
  fds::close_kept(kept);
  ::close(null);
}

TEST_F(DescriptorHooksTest, ANumberAProgramsCallInFlightMayCloseIsNeverTakenForTheAgents) {
  // A close loop's close(n) looked at the registry before the agent's open returned
  // n, and makes its system call after: the agent must not keep n.
  int n = open("/dev/null", O_RDONLY);
  ASSERT_GE(n, 0);
  ::close(n);
  ASSERT_TRUE(fds::begin_replacing(n));  // the program's call, announced, not done
  int held = fds::open_held(AT_FDCWD, "/dev/null", O_RDONLY);
  EXPECT_GE(held, 0);
  EXPECT_NE(held, n);
  ::close(n);  // the call goes through: whatever is at n is not the agent's
  fds::end_replacing(n);
  EXPECT_TRUE(is_open(held));
  fds::close_held(held);
  EXPECT_FALSE(is_open(held));
}

TEST_F(DescriptorHooksTest, AChildMadeWithoutForkDoesNotWaitForThreadsItDoesNotHave) {
  // Its copy of the registry says another thread holds a number: in the child,
  // nobody will ever close it. (It hung in close_range.)
  std::atomic<int> held{-1};
  std::atomic<bool> done{false};
  std::thread agent([&] {
    held = fds::open_held(AT_FDCWD, "/dev/null", O_RDONLY);
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fds::close_held(held);
  });
  while (held < 0) std::this_thread::yield();
  pid_t child = static_cast<pid_t>(syscall(SYS_fork));
  if (child == 0) {
    CloseRangeHook<0>::call(static_cast<unsigned>(held.load()), ~0U, 0);
    _exit(is_open(held) ? 1 : 0);
  }
  ASSERT_GT(child, 0);
  int status = status_of(child);
  done = true;
  agent.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(DescriptorHooksTest, ANegativeNumberIsNeverTheAgents) {
  // close(-1) spun for good in the fork children of a shell whose agent held a number
  // counted with -1's: a free slot (-1) was taken for the agent's descriptor.
  int held[fds::kBuckets];
  for (int& fd : held) fd = fds::open_held(AT_FDCWD, "/dev/null", O_RDONLY);  // every bucket
  fds::close_held(fds::open_held(AT_FDCWD, "/dev/null", O_RDONLY));           // and a free slot
  pid_t child = fork();
  if (child == 0) {
    fds::after_fork_in_child();  // as the agent's atfork handler does
    errno = 0;
    bool refused = CloseHook<0>::call(-1) == -1 && errno == EBADF;
    errno = 0;
    refused = refused && Dup2Hook<0>::call(0, -1) == -1 && errno == EBADF;
    _exit(refused ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  int status = status_of(child);
  for (int fd : held) fds::close_held(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// nmprof run's broker socket, inherited: adopted where it is, and exec'd images
// inherit it wherever a program's close moves it.
TEST_F(DescriptorHooksTest, AnAdoptedDescriptorIsMovedByACloseAndStaysInheritable) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);  // no FD_CLOEXEC: inherited
  ino_t socket = inode_of(pair[1]);
  EXPECT_LT(fds::adopt(pair[1], socket + 1), 0);  // not the socket it names
  int kept = fds::adopt(pair[1], socket);
  ASSERT_GE(kept, 0);
  EXPECT_EQ(fds::acquire(kept), pair[1]);  // where it was
  fds::release(kept);
  EXPECT_EQ(CloseHook<0>::call(pair[1]), -1);
  int moved = fds::acquire(kept);
  fds::release(kept);
  EXPECT_NE(moved, pair[1]);
  EXPECT_EQ(inode_of(moved), socket);
  EXPECT_EQ(fcntl(moved, F_GETFD) & FD_CLOEXEC, 0);
  fds::close_kept(kept);
  EXPECT_FALSE(is_open(moved));
  ::close(pair[0]);
}

TEST_F(DescriptorHooksTest, AHeldSocketPairIsConnectedAndTheProgramCannotCloseIt) {
  int pair[2];
  ASSERT_TRUE(fds::hold_socket_pair(pair));
  EXPECT_EQ(fcntl(pair[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(send(pair[1], "x", 1, 0), 1);
  char c = 0;
  EXPECT_EQ(recv(pair[0], &c, 1, 0), 1);
  EXPECT_EQ(c, 'x');
  // Held by this thread: a program call on the number from this thread (a signal
  // handler, as far as the registry can tell) is refused rather than waiting.
  errno = 0;
  EXPECT_EQ(CloseHook<0>::call(pair[0]), -1);
  EXPECT_TRUE(is_open(pair[0]));
  fds::close_held(pair[0]);
  fds::close_held(pair[1]);
  EXPECT_FALSE(is_open(pair[0]));
  EXPECT_FALSE(is_open(pair[1]));
}

TEST_F(DescriptorHooksTest, AReceivedDescriptorIsHeldOnceProvenTheFile) {
  int file = open(path_.c_str(), O_WRONLY);
  ASSERT_GE(file, 0);
  struct Context {
    int fd;
    ino_t inode;
  } context{file, inode_of(file)};
  int held = fds::hold_made({[](void* c) { return static_cast<Context*>(c)->fd; },
                             [](int fd, void* c) { return inode_of(fd) == static_cast<Context*>(c)->inode; },
                             &context});
  EXPECT_EQ(held, file);
  errno = 0;
  EXPECT_EQ(CloseHook<0>::call(held), -1);  // this thread holds it
  fds::close_held(held);
  EXPECT_FALSE(is_open(file));
}

}  // namespace
}  // namespace nmprof
