// The safe point of the ptrace attach (attach/ptrace/safe_point.h): the rule over
// described frames, and the verdicts on the real stacks of a child's threads, walked
// through its memory with the agent's unwinder.
#include "attach/ptrace/safe_point.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "attach/fd_io.h"
#include "attach/ptrace/known_functions.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/ptrace/seized_thread.h"
#include "attach/ptrace/target_modules.h"
#include "attach/ptrace/thread_stack.h"
#include "attach/ptrace/tracee_wait.h"

namespace nmprof::attach {
namespace {

StackFrame frame(CodeKind kind, std::string name = "", std::string module = "") {
  StackFrame f;
  f.kind = kind;
  if (!name.empty()) f.functions.push_back(std::move(name));
  f.module = module.empty() ? (kind == CodeKind::kLibc ? "libc.so.6" : "program") : std::move(module);
  return f;
}

// The bottom of a thread pthread_create started, and of the main thread.
const std::vector<StackFrame> kThreadStart = {frame(CodeKind::kLibc), frame(CodeKind::kLibc, "__clone3")};
const std::vector<StackFrame> kMainStart = {frame(CodeKind::kLibc), frame(CodeKind::kLibc, "__libc_start_main"),
                                            frame(CodeKind::kProgram, "_start")};

std::vector<StackFrame> stack(std::vector<StackFrame> top, const std::vector<StackFrame>& bottom = kThreadStart) {
  top.insert(top.end(), bottom.begin(), bottom.end());
  return top;
}

TEST(SafePoint, AnIdleCallTheProgramMadeIsSafe) {
  EXPECT_TRUE(judge_stack(stack({frame(CodeKind::kLibc, "nanosleep"), frame(CodeKind::kProgram, "main")}, kMainStart),
                          true)
                  .safe);
  // pthread_cond_wait's inner frames have no exported name.
  EXPECT_TRUE(judge_stack(stack({frame(CodeKind::kLibc), frame(CodeKind::kLibc, "pthread_cond_wait"),
                                 frame(CodeKind::kProgram, "worker")}),
                          true)
                  .safe);
  EXPECT_TRUE(judge_stack(stack({frame(CodeKind::kProgram, "compute"), frame(CodeKind::kProgram, "worker")}), true)
                  .safe);
}

TEST(SafePoint, AWaitInsideAnAllocatorIsNot) {
  // jemalloc waiting for its arena's lock: futex in libc, called from the allocator.
  auto verdict = judge_stack(stack({frame(CodeKind::kLibc, "pthread_mutex_lock"),
                                    frame(CodeKind::kAllocator, "", "libjemalloc.so.2"),
                                    frame(CodeKind::kProgram, "worker")}),
                             true);
  EXPECT_FALSE(verdict.safe);
  EXPECT_NE(verdict.why.find("libjemalloc.so.2 (an allocator)"), std::string::npos) << verdict.why;
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kAllocator, "", "libtcmalloc_minimal.so.4"),
                                  frame(CodeKind::kProgram, "worker")}),
                           true)
                   .safe);
}

TEST(SafePoint, NoFrameOfTheAgentOrTheLoaderAnywhere) {
  // The agent's hook calling the allocator: the pc is in the allocator, the hook below.
  auto in_agent = judge_stack(stack({frame(CodeKind::kProgram, "memcpy_like"), frame(CodeKind::kAgent, "", "libnmprof.so"),
                                     frame(CodeKind::kProgram, "worker")}),
                              true);
  EXPECT_FALSE(in_agent.safe);
  EXPECT_NE(in_agent.why.find("nmprof's agent"), std::string::npos);
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kProgram, "constructor"), frame(CodeKind::kLoader, "", "ld-linux-x86-64.so.2"),
                                  frame(CodeKind::kLibc, "dlopen"), frame(CodeKind::kProgram, "main")},
                                 kMainStart),
                           true)
                   .safe);
}

TEST(SafePoint, TheCLibraryOnlyAtTheTopAndOnlyInAnIdleCall) {
  // stdio holds the stream's lock while it reads.
  auto in_fgets = judge_stack(stack({frame(CodeKind::kLibc, "read"), frame(CodeKind::kLibc, "fgets"),
                                     frame(CodeKind::kProgram, "main")},
                                    kMainStart),
                              true);
  EXPECT_FALSE(in_fgets.safe);
  EXPECT_NE(in_fgets.why.find("fgets"), std::string::npos) << in_fgets.why;
  // A callback of the C library (qsort's comparator) that waits: qsort is below it.
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kLibc, "nanosleep"), frame(CodeKind::kProgram, "compare"),
                                  frame(CodeKind::kLibc, "qsort"), frame(CodeKind::kProgram, "main")},
                                 kMainStart),
                           true)
                   .safe);
  // A signal handler: the signal frame (__restore_rt) is the C library's.
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kLibc, "pause"), frame(CodeKind::kProgram, "handler"),
                                  frame(CodeKind::kLibc), frame(CodeKind::kProgram, "worker")}),
                           true)
                   .safe);
  // A thread of the C library's own (a timer's helper) has no frame of the program.
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kLibc, "sigwaitinfo"), frame(CodeKind::kLibc)}), true).safe);
}

TEST(SafePoint, AStackNotFollowedToItsStartIsNotSafe) {
  auto idle = stack({frame(CodeKind::kLibc, "nanosleep"), frame(CodeKind::kProgram, "main")}, kMainStart);
  EXPECT_FALSE(judge_stack(idle, false).safe);
  EXPECT_FALSE(judge_stack(std::vector<StackFrame>{}, true).safe);
  // JIT code (no module), or a stack whose end is no thread's start.
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kUnknown), frame(CodeKind::kProgram, "worker")}), true).safe);
  EXPECT_FALSE(judge_stack(std::vector{frame(CodeKind::kProgram, "main"), frame(CodeKind::kAllocator, "", "libx.so")},
                           true)
                   .safe);
  // More C library frames above the start than start_thread: one of them is no entry.
  EXPECT_FALSE(judge_stack(stack({frame(CodeKind::kProgram, "worker"), frame(CodeKind::kLibc, "qsort")}), true).safe);
}

TEST(KnownFunctions, InternalAliasesCountAsTheExportedName) {
  EXPECT_TRUE(is_lockless_call("__libc_read"));
  EXPECT_TRUE(is_lockless_call("___pthread_cond_wait"));
  EXPECT_TRUE(is_lockless_call("__GI___nanosleep"));
  EXPECT_FALSE(is_lockless_call("__read_nocancel"));  // libc's own reads, under its locks
  EXPECT_FALSE(is_lockless_call("fgets"));
  EXPECT_TRUE(is_entry_function("__libc_start_main"));
  EXPECT_TRUE(is_entry_function("start_thread"));
  EXPECT_TRUE(is_allocator_function("__libc_malloc"));
  EXPECT_TRUE(is_allocator_function("je_malloc_default"));
  EXPECT_TRUE(is_allocator_function("zend_mm_alloc_huge"));
  EXPECT_FALSE(is_allocator_function("main"));
}

// Threads of a child, each waiting somewhere for ever; they report their ids.
enum Role : char { kSleeper = 's', kCondWaiter = 'c', kStdioReader = 'f', kComparator = 'q', kAllocatorLock = 'a',
                   kSignalHandler = 'h', kMainReader = 'm' };

int g_report = -1;
int g_never_written = -1;
pthread_mutex_t g_held = PTHREAD_MUTEX_INITIALIZER;

void report(Role role) {
  char line[32];
  int n = snprintf(line, sizeof line, "%c%ld\n", role, static_cast<long>(syscall(SYS_gettid)));
  if (write(g_report, line, static_cast<size_t>(n)) != n) _exit(3);
}

extern "C" __attribute__((noinline)) void* sleeper(void*) {
  report(kSleeper);
  for (;;) {
    timespec t{1000, 0};
    nanosleep(&t, nullptr);
  }
}

extern "C" __attribute__((noinline)) void* cond_waiter(void*) {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  report(kCondWaiter);
  pthread_mutex_lock(&mutex);
  for (;;) pthread_cond_wait(&cond, &mutex);
}

extern "C" __attribute__((noinline)) void* stdio_reader(void*) {
  FILE* in = fdopen(g_never_written, "r");
  char line[16];
  report(kStdioReader);
  for (;;)
    if (!fgets(line, sizeof line, in)) _exit(4);
}

extern "C" __attribute__((noinline)) int waiting_comparator(const void*, const void*) {
  for (;;) {
    timespec t{1000, 0};
    nanosleep(&t, nullptr);
  }
}

extern "C" __attribute__((noinline)) void* comparing(void*) {
  int values[4] = {4, 3, 2, 1};
  report(kComparator);
  qsort(values, 4, sizeof values[0], waiting_comparator);
  return nullptr;
}

// An allocator linked into the program: known by its name.
extern "C" __attribute__((noinline)) void je_test_arena_lock() {
  pthread_mutex_lock(&g_held);
  pthread_mutex_unlock(&g_held);
}

extern "C" __attribute__((noinline)) void* allocating(void*) {
  report(kAllocatorLock);
  for (;;) je_test_arena_lock();
}

extern "C" __attribute__((noinline)) void waiting_handler(int) {
  for (;;) pause();
}

extern "C" __attribute__((noinline)) void* signalled(void*) {
  report(kSignalHandler);
  for (;;) pthread_kill(pthread_self(), SIGUSR1);
}

extern "C" __attribute__((noinline)) void read_in_main() {
  char c;
  report(kMainReader);
  for (;;)
    if (read(g_never_written, &c, 1) != -1 || errno != EINTR) _exit(5);
}

[[noreturn]] void run_child(int report_fd, int never_written) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  g_report = report_fd;
  g_never_written = never_written;
  pthread_mutex_lock(&g_held);  // never unlocked: allocating() waits on it
  struct sigaction action {};
  action.sa_handler = waiting_handler;
  sigaction(SIGUSR1, &action, nullptr);
  pthread_t thread;
  for (auto* body : {sleeper, cond_waiter, stdio_reader, comparing, allocating, signalled})
    pthread_create(&thread, nullptr, body, nullptr);
  read_in_main();
  _exit(0);
}

class ChildThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (read_text_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope").value_or("0")[0] > '1' && geteuid() != 0)
      GTEST_SKIP() << "ptrace of a child is not allowed here";
    int reports[2], never[2];
    ASSERT_EQ(pipe(reports), 0);
    ASSERT_EQ(pipe(never), 0);
    child_ = fork();
    if (child_ == 0) run_child(reports[1], never[0]);
    close(reports[1]);
    FILE* in = fdopen(reports[0], "r");
    char line[32];
    while (tids_.size() < 7 && fgets(line, sizeof line, in)) tids_[line[0]] = atoi(line + 1);
    fclose(in);
    never_written_ = never[1];
    close(never[0]);
    ASSERT_EQ(tids_.size(), 7u);
    // Until each waits in its system call.
    for (auto [role, tid] : tids_) {
      std::string path = "/proc/" + std::to_string(child_) + "/task/" + std::to_string(tid) + "/syscall";
      for (int i = 0; i < 1000 && read_text_at(AT_FDCWD, path.c_str()).value_or("running").rfind("running", 0) == 0;
           i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    if (never_written_ >= 0) close(never_written_);
  }

  // As nmprof judges it: a walk that meets modules not read yet is made again once they are.
  StackVerdict verdict(Role role) {
    auto target = inspect_process(child_);
    EXPECT_TRUE(target);
    auto maps = read_text_at(AT_FDCWD, ("/proc/" + std::to_string(child_) + "/maps").c_str());
    TargetModules modules(*target, parse_maps(maps.value_or("")));
    TraceSignals held;
    for (;;) {
      auto thread = SeizedThread::seize(*target, tids_.at(role), Clock::now() + std::chrono::seconds(10));
      EXPECT_TRUE(thread) << thread.error().message;
      if (!thread) return {};
      ThreadStack stack = walk_thread_stack(thread->memory(), thread->registers(), modules);
      thread->release();
      if (!modules.read_missing()) return judge_stack(stack.frames, stack.reached_entry);
    }
  }

  pid_t child_ = -1;
  int never_written_ = -1;
  std::map<char, pid_t> tids_;
};

TEST_F(ChildThreads, IdleCallsOfTheProgramAreSafe) {
  for (Role role : {kSleeper, kCondWaiter, kMainReader}) {
    StackVerdict v = verdict(role);
    EXPECT_TRUE(v.safe) << static_cast<char>(role) << ": " << v.why;
  }
}

TEST_F(ChildThreads, StdioCallbacksAllocatorsAndSignalHandlersAreNot) {
  for (Role role : {kStdioReader, kComparator, kAllocatorLock, kSignalHandler}) {
    StackVerdict v = verdict(role);
    EXPECT_FALSE(v.safe) << static_cast<char>(role);
  }
  EXPECT_NE(verdict(kAllocatorLock).why.find("je_test_arena_lock"), std::string::npos) << verdict(kAllocatorLock).why;
  EXPECT_NE(verdict(kStdioReader).why.find("the C library"), std::string::npos) << verdict(kStdioReader).why;
}

}  // namespace
}  // namespace nmprof::attach
