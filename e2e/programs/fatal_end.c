// Allocates 2,000 blocks of 4096 bytes in allocate_site, then ends as asked:
//   fatal_end quick_exit | abort | segv | bus | ill | fpe | raise_segv | kill
//             | handled_segv   (its own SIGSEGV handler, installed first, recovers
//                               from a fault and the program goes on)
//             | own_handler    (its own SIGSEGV handler reports and exits with 3)
//             | chaining       (its own SIGSEGV handler reports and passes the fault
//                               on to the handler it replaced, as crash reporters do)
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void* volatile sink;
static volatile uintptr_t unmapped = 16;

static void fault(void) { *(volatile int*)unmapped = 1; }
static sigjmp_buf recover;

__attribute__((noinline)) void allocate_site(void) {
  for (int i = 0; i < 2000; i++) sink = malloc(4096);
}

static void jump_back(int signo) {
  (void)signo;
  siglongjmp(recover, 1);
}

static void report_and_exit(int signo) {
  (void)signo;
  static const char line[] = "own handler\n";
  ssize_t ignored = write(STDOUT_FILENO, line, sizeof line - 1);
  (void)ignored;
  _exit(3);
}

static struct sigaction replaced;

static void report_and_chain(int signo, siginfo_t* info, void* context) {
  static const char line[] = "chaining\n";
  ssize_t ignored = write(STDOUT_FILENO, line, sizeof line - 1);
  (void)ignored;
  if (replaced.sa_flags & SA_SIGINFO)
    replaced.sa_sigaction(signo, info, context);
  else if (replaced.sa_handler == SIG_DFL)
    signal(signo, SIG_DFL);  // the fault happens again on return, and kills
  else if (replaced.sa_handler != SIG_IGN)
    replaced.sa_handler(signo);
}

static void on(int signo, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(signo, &action, NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* how = argv[1];
  allocate_site();
  puts("allocated");
  fflush(stdout);
  if (strcmp(how, "quick_exit") == 0) quick_exit(0);
  if (strcmp(how, "abort") == 0) abort();
  if (strcmp(how, "segv") == 0) fault();
  if (strcmp(how, "raise_segv") == 0) raise(SIGSEGV);
  if (strcmp(how, "kill") == 0) raise(SIGKILL);
  if (strcmp(how, "ill") == 0) __builtin_trap();
  if (strcmp(how, "fpe") == 0) {
    volatile int zero = 0;
    printf("%d\n", 100 / zero);
  }
  if (strcmp(how, "bus") == 0) {
    FILE* f = tmpfile();
    char* p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fileno(f), 0);  // beyond the empty file's end
    printf("%d\n", *(volatile char*)p);
  }
  if (strcmp(how, "handled_segv") == 0) {
    on(SIGSEGV, jump_back);
    for (int i = 0; i < 3; i++)
      if (sigsetjmp(recover, 1) == 0) fault();
    puts("recovered");
    return 0;
  }
  if (strcmp(how, "chaining") == 0) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report_and_chain;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &replaced);
    fault();
  }
  if (strcmp(how, "own_handler") == 0) {
    on(SIGSEGV, report_and_exit);
    fault();
  }
  return 4;
}
