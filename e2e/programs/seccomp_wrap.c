// Runs a command under a seccomp filter, as a container or a systemd unit would:
//   seccomp_wrap refuse|kill SYSCALL_NUMBER COMMAND [ARGS...]
// Every system call is allowed but SYSCALL_NUMBER, which fails with EPERM (refuse,
// as Docker's default profile does) or kills the process (kill, as systemd's
// SystemCallFilter= does).
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 4) return fprintf(stderr, "usage: seccomp_wrap refuse|kill SYSCALL COMMAND...\n"), 2;
  unsigned action = strcmp(argv[1], "kill") == 0 ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | 1;
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)atoi(argv[2]), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof code / sizeof code[0], code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    return perror("seccomp"), 1;
  execvp(argv[3], argv + 3);
  perror(argv[3]);
  return 127;
}
