// Prints the disposition of the termination signals as the program finds them
// (sigaction, then signal), puts SIGTERM's back after ignoring it for a while, as programs do around
// a child; sets the default action with flags and a mask and prints what it then finds; then
// allocates and ends by SIGTERM.
//   signal_dispositions
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static const char* name(void (*handler)(int)) {
  return handler == SIG_DFL ? "default" : handler == SIG_IGN ? "ignored" : "handler";
}

__attribute__((noinline)) void before_sigterm(void) {
  for (int i = 0; i < 100; i++) {
    void* p = malloc(10000);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

int main(void) {
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    struct sigaction found;
    sigaction(signals[i], NULL, &found);
    void (*old)(int) = signal(signals[i], SIG_IGN);
    signal(signals[i], old);
    printf("%d %s %s\n", signals[i], name(found.sa_handler), name(old));
  }
  // The default action given flags and a mask, three ways: the flags and mask found after are those set
  // (without SA_RESTORER, which glibc adds to every action).
  struct sigaction set = {0};
  set.sa_handler = SIG_DFL;
  set.sa_flags = SA_RESTART | SA_NODEFER;
  sigemptyset(&set.sa_mask);
  sigaddset(&set.sa_mask, SIGUSR1);
  sigaction(SIGTERM, &set, NULL);
  set.sa_flags = SA_SIGINFO;
  set.sa_sigaction = NULL;
  sigaction(SIGINT, &set, NULL);
  signal(SIGHUP, SIG_IGN);
  signal(SIGHUP, SIG_DFL);
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    struct sigaction found;
    sigaction(signals[i], NULL, &found);
    printf("%d flags %#x usr1 %d hup %d\n", signals[i], found.sa_flags & ~0x04000000, sigismember(&found.sa_mask, SIGUSR1),
           sigismember(&found.sa_mask, SIGHUP));
  }
  fflush(stdout);
  before_sigterm();
  raise(SIGTERM);
  return 0;
}
