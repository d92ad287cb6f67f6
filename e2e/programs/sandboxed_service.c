// A program that sandboxes itself with seccomp, as services under systemd's
// SystemCallFilter= or a container's profile do, for nmprof attach. It installs its
// filter (PR_SET_NO_NEW_PRIVS, then a BPF program that kills the process on a refused
// call), prints "ready", then allocates at known sites (leaky_site, churn_site) and
// sleeps in clock_nanosleep most of the time, until STOPFILE exists; then prints
// "ok N" and exits 0. Killed by the filter, it dies of SIGSYS (exit 159 in a shell).
//   sandboxed_service allow-list STOPFILE   only what this program itself needs
//   sandboxed_service no-restart STOPFILE   everything but restart_syscall, which the
//                                           kernel uses to resume an interrupted sleep
//   sandboxed_service strict                strict mode (read, write, exit, sigreturn):
//                                           waits for a line on stdin, prints "ok"
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LOAD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define CHECK_ARCH                                                         \
  LOAD_ARCH, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), \
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

// What this program does between "ready" and its exit, and nothing else: a program
// thread of an agent loaded by nmprof makes no other call.
static struct sock_filter allow_list[] = {
    CHECK_ARCH,
    LOAD_NR,
    ALLOW(SYS_read),
    ALLOW(SYS_write),
    ALLOW(SYS_brk),
    ALLOW(SYS_mmap),
    ALLOW(SYS_munmap),
    ALLOW(SYS_mremap),
    ALLOW(SYS_madvise),
    ALLOW(SYS_futex),
    ALLOW(SYS_nanosleep),
    ALLOW(SYS_clock_nanosleep),
    ALLOW(SYS_clock_gettime),
    ALLOW(SYS_getpid),
    ALLOW(SYS_gettid),
    ALLOW(SYS_fstat),
    ALLOW(SYS_newfstatat),
    ALLOW(SYS_access),
    ALLOW(SYS_faccessat),
    ALLOW(SYS_faccessat2),
    ALLOW(SYS_rt_sigreturn),
    ALLOW(SYS_rt_sigprocmask),
    ALLOW(SYS_getrandom),
    ALLOW(SYS_exit),
    ALLOW(SYS_exit_group),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

static struct sock_filter no_restart[] = {
    CHECK_ARCH,
    LOAD_NR,
    KILL(SYS_restart_syscall),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static void install(struct sock_filter* filter, unsigned short length) {
  struct sock_fprog program = {length, filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    fprintf(stderr, "seccomp: %s\n", strerror(errno));
    exit(2);
  }
}

static void* kept[1024];

// Not tail calls, so that the sites stay in the stacks.
__attribute__((noinline)) void* leaky_site(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) char* churn_site(size_t size) {
  char* p = calloc(1, size);
  __asm__ volatile("" ::: "memory");
  return p;
}

// Blocks filled and checked, as a real service's work; some of leaky_site's stay.
static int round_ok(unsigned long i) {
  size_t size = 64 + (i % 512);
  char* block = churn_site(size);
  if (!block) return 0;
  memset(block, (int)(i & 0x7f), size);
  unsigned long sum = 0;
  for (size_t k = 0; k < size; k++) sum += (unsigned char)block[k];
  free(block);
  if (sum != (i & 0x7f) * size) return 0;
  free(kept[i % 1024]);
  kept[i % 1024] = leaky_site(1000);
  return kept[i % 1024] != NULL;
}

// 1 ms sleeps between rounds of 200 allocations: the thread is nearly always asleep.
static int serve(const char* stop_file) {
  struct timespec pause = {0, 1000000};
  unsigned long i = 0;
  for (unsigned long turn = 0;; turn++) {
    for (int k = 0; k < 200; k++, i++)
      if (!round_ok(i)) {
        printf("corrupt at %lu\n", i);
        return 1;
      }
    clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
    if (turn % 16 == 0 && access(stop_file, F_OK) == 0) break;
  }
  printf("ok %lu\n", i);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  // A buffer of its own: stdio would allocate one on first use with calls (ioctl) the
  // allow-list refuses.
  static char out[256];
  setvbuf(stdout, out, _IOLBF, sizeof out);
  if (strcmp(argv[1], "strict") == 0) {
    char line[64];
    printf("ready\n");  // printed first: stdio's buffer would be allocated in strict mode
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) return 2;
    if (read(0, line, sizeof line) > 0) (void)!write(1, "ok\n", 3);
    syscall(SYS_exit, 0);  // exit_group is not allowed in strict mode
  }
  if (argc != 3) return 2;
  if (strcmp(argv[1], "allow-list") == 0)
    install(allow_list, sizeof allow_list / sizeof allow_list[0]);
  else if (strcmp(argv[1], "no-restart") == 0)
    install(no_restart, sizeof no_restart / sizeof no_restart[0]);
  else
    return 2;
  printf("ready\n");
  return serve(argv[2]);
}
