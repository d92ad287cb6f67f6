// Says "got N" on stdout for each of the signals a service is sent (USR1, USR2, ALRM,
// PIPE, QUIT, WINCH, HUP) and ends by SIGTERM's default action, or with its parent
// (so that a test whose nmprof died does not wait for it).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void caught(int signo) {
  char line[16] = "got ";
  int n = 4;
  if (signo >= 10) line[n++] = (char)('0' + signo / 10);
  line[n++] = (char)('0' + signo % 10);
  line[n++] = '\n';
  ssize_t ignored = write(STDOUT_FILENO, line, (size_t)n);
  (void)ignored;
}

int main(void) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int signals[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGQUIT, SIGWINCH, SIGHUP};
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = caught;
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) sigaction(signals[i], &action, NULL);
  free(malloc(100000));
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
