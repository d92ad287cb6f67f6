#include "agent/recording/writer_thread.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agent/safety/own_descriptors.h"

namespace nmprof {
namespace {

constexpr size_t kStackBytes = 512 * 1024;  // symbol tables are read and names demangled on it

struct Start {
  void* (*body)(void*);
  void* arg;
};

void* run(void* p) {
  Start start = *static_cast<Start*>(p);
  free(p);
  prctl(PR_SET_NAME, "nmprof writer");
  return start.body(start.arg);
}

}  // namespace

int start_writer_thread(void* (*body)(void*), void* arg) {
  auto* start = static_cast<Start*>(malloc(sizeof(Start)));
  if (!start) return ENOMEM;
  *start = {body, arg};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, kStackBytes);
  // The new thread inherits the mask: it never runs a host's signal handler.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pthread_t thread;
  int error = pthread_create(&thread, &attr, run, start);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  pthread_attr_destroy(&attr);
  if (error != 0) free(start);
  return error;
}

// From /proc/self/stat: the state of the main thread (3rd field; the 2nd, the command
// name, may hold spaces and parentheses) and the number of threads (20th). A main
// thread that left by pthread_exit() stays, as a zombie, until the last thread ends.
bool only_thread_left() {
  char text[1024];
  ssize_t n;
  {
    own_descriptors::HeldFile stat("/proc/self/stat", O_RDONLY);
    if (stat.fd() < 0) return false;
    n = read(stat.fd(), text, sizeof text - 1);
  }
  if (n <= 0) return false;
  text[n] = 0;
  const char* p = strrchr(text, ')');
  if (!p || p[1] != ' ') return false;
  char main_state = p[2];
  for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
  long threads = p ? strtol(p + 1, nullptr, 10) : 0;
  return threads == 1 || (threads == 2 && main_state == 'Z');
}

void wait_while(const std::atomic<uint32_t>& word, uint32_t value, int timeout_ms) {
  struct timespec timeout = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value, &timeout, nullptr, 0);
}

void wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace nmprof
