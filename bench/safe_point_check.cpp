// How long nmprof attach's safe-point check takes (attach/ptrace/safe_point.h), on a
// child with 8 threads: 4 waiting (nanosleep, pthread_cond_wait, poll, read) and 4
// allocating and computing. Per round, each thread is stopped, its stack walked and
// judged, and released. Printed: the modules' reading (their files read and unwind
// rules compiled, once, while the threads run), then medians over the rounds of the
// stop (ptrace interrupt until the thread stops), the walk and judgement, and a
// whole round.
//   safe_point_check [ROUNDS]
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "attach/fd_io.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/ptrace/safe_point.h"
#include "attach/ptrace/seized_thread.h"
#include "attach/ptrace/target_modules.h"
#include "attach/ptrace/thread_stack.h"
#include "attach/ptrace/tracee_wait.h"

using namespace nmprof::attach;
using Micros = std::chrono::duration<double, std::micro>;

namespace {

int g_tids = -1;

void report_tid() {
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (write(g_tids, &tid, sizeof tid) != sizeof tid) _exit(3);
}

void* sleeping(void*) {
  report_tid();
  for (;;) {
    timespec t{1000, 0};
    nanosleep(&t, nullptr);
  }
}

void* waiting(void*) {
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  report_tid();
  pthread_mutex_lock(&mutex);
  for (;;) pthread_cond_wait(&cond, &mutex);
}

void* polling(void*) {
  report_tid();
  for (;;) poll(nullptr, 0, 1000);
}

__attribute__((noinline)) unsigned long compute(unsigned long x) {
  for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
  return x;
}

void* allocating(void*) {
  report_tid();
  volatile unsigned long sink = 0;
  for (unsigned long i = 0;; i++) {
    void* p = malloc(16 + i % 4096);
    sink = compute(sink + reinterpret_cast<uintptr_t>(p));
    free(p);
  }
}

[[noreturn]] void run_child(int tids) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  g_tids = tids;
  pthread_t thread;
  for (auto* body : {sleeping, waiting, polling, allocating, allocating, allocating, allocating})
    pthread_create(&thread, nullptr, body, nullptr);
  char c;
  report_tid();
  for (;;) (void)!read(STDIN_FILENO, &c, 1);  // the main thread, waiting in read
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  int pipe_fds[2], idle_input[2];
  if (pipe(pipe_fds) != 0 || pipe(idle_input) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    dup2(idle_input[0], STDIN_FILENO);
    run_child(pipe_fds[1]);
  }
  close(pipe_fds[1]);
  std::vector<pid_t> tids(8);
  for (pid_t& tid : tids)
    if (read(pipe_fds[0], &tid, sizeof tid) != sizeof tid) return 1;
  usleep(100 * 1000);
  auto target = inspect_process(child);
  if (!target) return 1;
  auto maps = read_text_at(AT_FDCWD, ("/proc/" + std::to_string(child) + "/maps").c_str());
  TargetModules modules(*target, parse_maps(maps.value_or("")));
  TraceSignals held;
  std::vector<double> stops, walks, whole;
  double modules_read = 0;
  int safe_total = 0;
  for (int round = 0; round <= rounds; round++) {  // round 0 finds the modules, which are read after it
    auto round_begin = std::chrono::steady_clock::now();
    for (pid_t tid : tids) {
      auto begin = std::chrono::steady_clock::now();
      auto thread = SeizedThread::seize(*target, tid, Clock::now() + std::chrono::seconds(10));
      if (!thread) {
        fprintf(stderr, "%s\n", thread.error().message.c_str());
        return 1;
      }
      auto stopped = std::chrono::steady_clock::now();
      ThreadStack stack = walk_thread_stack(thread->memory(), thread->registers(), modules);
      bool safe = judge_stack(stack.frames, stack.reached_entry).safe;
      auto judged = std::chrono::steady_clock::now();
      thread->release();
      if (round == 0) continue;
      safe_total += safe;
      stops.push_back(Micros(stopped - begin).count());
      walks.push_back(Micros(judged - stopped).count());
    }
    auto round_end = std::chrono::steady_clock::now();
    if (round == 0) {
      modules.read_missing();
      modules_read = Micros(std::chrono::steady_clock::now() - round_end).count();
    } else {
      whole.push_back(Micros(round_end - round_begin).count());
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  printf("8 threads (4 waiting, 4 allocating and computing), %d rounds; %.0f%% of the stacks judged safe\n", rounds,
         100.0 * safe_total / (8.0 * rounds));
  printf("modules read, once:           %8.0f us\n", modules_read);
  printf("stop of a thread (median):    %8.1f us\n", median(stops));
  printf("walk and judge (median):      %8.1f us\n", median(walks));
  printf("a round of 8 threads (median):%8.0f us\n", median(whole));
  return 0;
}
