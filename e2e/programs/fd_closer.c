// A program that closes descriptors it did not open, as daemons do, while two
// threads allocate: for ROUNDS rounds its main thread closes every number from 3 on
// (HOW: "close" one by one up to 1023, "close_range" with close_range(3, ~0U),
// "dup2" by dup2()ing /dev/null over each number up to 1023 and closing it again),
// then opens FILES files of its own, writes a known pattern into each, closes and
// reopens them and checks their contents byte for byte. Prints "ok" and exits 0
// when every file held exactly what the program wrote; otherwise names the first
// difference and exits 1. With LIMIT, it first lowers its RLIMIT_NOFILE to that:
// 1024 puts every number it may have in the range it closes.
//   fd_closer HOW ROUNDS DIRECTORY [LIMIT]
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kFiles = 8, kFileBytes = 4096, kHighest = 1023 };

static atomic_int stop;
__attribute__((noinline)) void allocating_site(void) {
  void* p = malloc(256);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

static void* allocate(void* unused) {
  (void)unused;
  while (!atomic_load(&stop)) allocating_site();
  return NULL;
}

static void close_others(const char* how) {
  if (strcmp(how, "close") == 0) {
    for (int fd = 3; fd <= kHighest; fd++) close(fd);
  } else if (strcmp(how, "close_range") == 0) {
    if (close_range(3, ~0U, 0) != 0) {
      perror("close_range");
      exit(2);
    }
  } else {
    int null = open("/dev/null", O_RDONLY);
    for (int fd = 3; fd <= kHighest; fd++)
      if (fd != null && dup2(null, fd) == fd) close(fd);
    close(null);
  }
}

static void pattern(unsigned char* out, int file, int round) {
  for (int i = 0; i < kFileBytes; i++) out[i] = (unsigned char)(file * 31 + round * 7 + i);
}

// 0 when the file holds exactly what was written.
static int check_file(const char* path, int file, int round) {
  unsigned char want[kFileBytes], got[kFileBytes + 1];
  pattern(want, file, round);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return perror(path), 1;
  ssize_t n = read(fd, got, sizeof got);
  close(fd);
  if (n != kFileBytes) return printf("%s: %zd bytes, wrote %d\n", path, n, kFileBytes), 1;
  for (int i = 0; i < kFileBytes; i++)
    if (got[i] != want[i]) return printf("%s: byte %d is %#x, wrote %#x\n", path, i, got[i], want[i]), 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) return fprintf(stderr, "usage: fd_closer HOW ROUNDS DIRECTORY [LIMIT]\n"), 2;
  const char* how = argv[1];
  int rounds = atoi(argv[2]);
  if (argc == 5) {
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = strtoul(argv[4], NULL, 10);
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return perror("setrlimit"), 2;
  }
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, allocate, NULL);
  char paths[kFiles][4096];
  for (int f = 0; f < kFiles; f++) snprintf(paths[f], sizeof paths[f], "%s/file%d", argv[3], f);
  int failed = 0;
  for (int round = 0; round < rounds && !failed; round++) {
    close_others(how);
    int fds[kFiles];
    unsigned char bytes[kFileBytes];
    for (int f = 0; f < kFiles; f++) {
      fds[f] = open(paths[f], O_RDWR | O_CREAT | O_TRUNC, 0600);
      if (fds[f] < 0) return perror(paths[f]), 2;
    }
    for (int f = 0; f < kFiles; f++) {
      pattern(bytes, f, round);
      if (write(fds[f], bytes, sizeof bytes) != sizeof bytes) return perror("write"), 2;
    }
    usleep(200);  // the agent's writer has a moment to use the numbers
    for (int f = 0; f < kFiles; f++) close(fds[f]);
    for (int f = 0; f < kFiles && !failed; f++) failed = check_file(paths[f], f, round);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  if (!failed) printf("ok\n");
  return failed;
}
