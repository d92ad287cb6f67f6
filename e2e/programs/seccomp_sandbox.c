// Allocates, puts itself under a seccomp filter that kills it (SIGSYS) for any system
// call but those it needs, and allocates on, as sandboxed services do.
//   seccomp_sandbox prctl|seccomp|tsync|exec [errno]
// prctl: prctl(PR_SET_SECCOMP); seccomp: syscall(SYS_seccomp); tsync: seccomp() with
// SECCOMP_FILTER_FLAG_TSYNC while a second thread allocates; exec: prctl, then execs
// itself as `seccomp_sandbox child`, which starts under the filter. errno: the filter
// refuses other calls with EPERM instead of killing.
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static void* volatile sink;

static void allocate(size_t bytes, int blocks) {
  for (int i = 0; i < blocks; i++) {
    char* p = malloc(bytes);
    memset(p, 1, bytes);
    sink = p;  // kept: live
  }
}

static void* allocating_thread(void* arg) {
  volatile int* stop = arg;
  while (!*stop) free(malloc(4096));
  return NULL;
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "prctl";
  if (strcmp(how, "child") == 0) {
    allocate(100000, 100);
    printf("child under the filter\n");
    return 0;
  }
  int refuse_with_errno = argc > 2 && strcmp(argv[2], "errno") == 0;
  allocate(100000, 200);  // 20 MB before the filter
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_brk), ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_mremap),
      ALLOW(SYS_madvise), ALLOW(SYS_futex), ALLOW(SYS_exit), ALLOW(SYS_exit_group), ALLOW(SYS_rt_sigreturn),
      ALLOW(SYS_clock_nanosleep), ALLOW(SYS_getpid), ALLOW(SYS_gettid), ALLOW(SYS_fstat), ALLOW(SYS_newfstatat),
      ALLOW(SYS_mprotect), ALLOW(SYS_rt_sigprocmask),
      // What an exec and the dynamic linker need.
      ALLOW(SYS_execve), ALLOW(SYS_openat), ALLOW(SYS_close), ALLOW(SYS_pread64), ALLOW(SYS_arch_prctl),
      ALLOW(SYS_set_tid_address), ALLOW(SYS_set_robust_list), ALLOW(SYS_rseq), ALLOW(SYS_prlimit64),
      ALLOW(SYS_access), ALLOW(SYS_getrandom),
      BPF_STMT(BPF_RET | BPF_K, refuse_with_errno ? SECCOMP_RET_ERRNO | 1 : SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog program = {sizeof code / sizeof code[0], code};
  volatile int stop = 0;
  pthread_t thread;
  int tsync = strcmp(how, "tsync") == 0;
  if (tsync) pthread_create(&thread, NULL, allocating_thread, (void*)&stop);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return perror("no_new_privs"), 1;
  long installed = strcmp(how, "prctl") == 0 || strcmp(how, "exec") == 0
                       ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program)
                       : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &program);
  if (installed != 0) return perror("seccomp"), 1;
  if (strcmp(how, "exec") == 0) {
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "child", (char*)NULL);
    return perror("exec"), 1;
  }
  allocate(100000, 200);  // 20 MB under the filter
  if (tsync) {
    stop = 1;
    pthread_join(thread, NULL);
  }
  printf("sandboxed and done\n");
  fflush(stdout);
  return 0;
}
