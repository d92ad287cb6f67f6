#include "cli/run/profile_signals.h"

#include <string.h>  // sigabbrev_np
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <iostream>

namespace nmprof::cli {
namespace {

volatile sig_atomic_t g_command = 0;  // the command's pid while it runs
volatile sig_atomic_t g_held = 0;     // the first signal that asked nmprof to end after it
volatile sig_atomic_t g_written = 0;  // the profile is written: uploads may still wait
sigset_t g_ignored;                   // what nmprof ignored when it started: never held

bool ends_nmprof(int signo) { return signo == SIGINT || signo == SIGTERM || signo == SIGHUP || signo == SIGQUIT; }

// "nmprof: SIGINT came while the profile is written: ...", without
// allocating (a signal handler).
void say_held(int signo) {
  char line[128] = "nmprof: SIG";
  const char* name = sigabbrev_np(signo);
  strncat(line, name ? name : "?", 16);
  strcat(line, " came while the profile is written: nmprof ends once it is written\n");
  ssize_t ignored = write(STDERR_FILENO, line, strlen(line));
  (void)ignored;
}

void on_signal(int signo, siginfo_t* info, void*) {
  if (raised_by_own_write(signo, info)) return;
  if (g_command > 0) {
    // From the kernel (a terminal key or resize): the command, in our process group, got it too.
    if (info->si_code <= 0) kill(static_cast<pid_t>(g_command), signo);
    return;
  }
  if (!ends_nmprof(signo) || sigismember(&g_ignored, signo) || g_held) return;
  g_held = signo;
  if (!g_written) say_held(signo);
}

}  // namespace

ProfileSignals::ProfileSignals() {
  g_written = 0;
  struct sigaction ours = {};
  ours.sa_sigaction = on_signal;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  sigemptyset(&forwarded_);
  sigemptyset(&g_ignored);
  for (size_t i = 0; i < std::size(kForwardedSignals); i++) {
    sigaction(kForwardedSignals[i], &ours, &previous_[i]);
    sigaddset(&forwarded_, kForwardedSignals[i]);
    if (previous_[i].sa_handler == SIG_IGN) sigaddset(&g_ignored, kForwardedSignals[i]);
  }
  sigprocmask(SIG_BLOCK, nullptr, &previous_mask_);
}

ProfileSignals::~ProfileSignals() {
  for (size_t i = 0; i < std::size(kForwardedSignals); i++) sigaction(kForwardedSignals[i], &previous_[i], nullptr);
}

void ProfileSignals::block() const { sigprocmask(SIG_BLOCK, &forwarded_, nullptr); }

void ProfileSignals::unblock() const { sigprocmask(SIG_SETMASK, &previous_mask_, nullptr); }

void ProfileSignals::restore_in_child() const {
  for (size_t i = 0; i < std::size(kForwardedSignals); i++) sigaction(kForwardedSignals[i], &previous_[i], nullptr);
  unblock();
}

void ProfileSignals::set_command(pid_t pid) { g_command = pid; }

std::function<bool()> ProfileSignals::profile_written() const {
  g_written = 1;
  return [] { return g_held != 0; };
}

void ProfileSignals::end_by_held_signal() const {
  int signo = g_held;
  if (signo == 0) return;
  std::cout.flush();
  std::cerr.flush();
  if (signo == SIGQUIT) {  // its default action dumps core: nmprof's would be of no use
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
  }
  signal(signo, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(signo);
}

}  // namespace nmprof::cli
