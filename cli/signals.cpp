#include "cli/signals.h"

#include <unistd.h>

#include <initializer_list>

namespace nmprof::cli {
namespace {

void ignore(int) {}

}  // namespace

bool raised_by_own_write(int signo, const siginfo_t* info) {
  return signo == SIGPIPE && info->si_code == SI_USER && info->si_pid == getpid();
}

void survive_failed_writes() {
  for (int signo : {SIGPIPE, SIGXFSZ}) {
    struct sigaction current {};
    if (sigaction(signo, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction handler {};
    handler.sa_handler = ignore;
    handler.sa_flags = SA_RESTART;
    sigemptyset(&handler.sa_mask);
    sigaction(signo, &handler, nullptr);
  }
}

}  // namespace nmprof::cli
