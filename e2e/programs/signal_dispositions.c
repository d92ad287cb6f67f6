// Prints the disposition of the termination signals as the program finds them
// (sigaction, then signal), puts SIGTERM's back after ignoring it for a while, as programs do around
// a child, then allocates and ends by SIGTERM.
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
  fflush(stdout);
  before_sigterm();
  raise(SIGTERM);
  return 0;
}
