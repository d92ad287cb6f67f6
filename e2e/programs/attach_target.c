// A native program for nmprof attach: it allocates at known sites (leaky_site,
// churn_site) and checks what it computes, or waits in read() or nanosleep() and
// checks the call was not disturbed. Prints "ready", then its result; exit 0 = ok.
//   attach_target loop STOPFILE     allocate until STOPFILE exists
//   attach_target read              read one line from stdin, then allocate a bit
//   attach_target sleep SECONDS     sleep once for SECONDS
//   attach_target shell SECONDS     wait for `sleep SECONDS` in system(): a frame of the
//                                   C library under the wait, never a safe point
//   attach_target churn SECONDS     as shell, while a thread starts threads that end
//                                   some 2 ms later, busy in memset until then: nmprof
//                                   often holds one as it ends; a safe point is rare
//   attach_target jail DIR STOPFILE chroot into DIR (as a daemon's privilege separation
//                                   does: its files are then out of its reach), then
//                                   loop; STOPFILE is a path in DIR
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void* kept[4096];

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

// One round: blocks filled and checked; some of leaky_site's stay (up to 4096).
static int round_ok(unsigned long i) {
  size_t size = 64 + (i % 512);
  char* block = churn_site(size);
  if (!block) return 0;
  for (size_t k = 0; k < size; k++)
    if (block[k] != 0) return 0;
  memset(block, (int)(i & 0x7f), size);
  unsigned long sum = 0;
  for (size_t k = 0; k < size; k++) sum += (unsigned char)block[k];
  free(block);
  if (sum != (i & 0x7f) * size) return 0;
  void* leak = leaky_site(1000);
  if (!leak) return 0;
  free(kept[i % 4096]);
  kept[i % 4096] = leak;
  return 1;
}

// Busy in the C library (memset: never a safe point) for about 2 ms.
static void busy_in_libc(void) {
  static char buffer[1 << 18];
  for (int i = 0; i < 100; i++) {
    memset(buffer, i, sizeof buffer);
    __asm__ volatile("" ::: "memory");
  }
}

static void* ends_soon(void* unused) {
  busy_in_libc();
  return unused;
}

// Starts a thread that ends soon, every 2 ms, busy in the C library in between.
static void* start_ending_threads(void* unused) {
  pthread_attr_t detached;
  pthread_attr_init(&detached);
  pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
  for (;;) {
    pthread_t thread;
    pthread_create(&thread, &detached, ends_soon, NULL);
    busy_in_libc();
  }
  return unused;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  int jail = strcmp(argv[1], "jail") == 0 && argc == 4;
  if (jail && (chroot(argv[2]) != 0 || chdir("/") != 0)) {
    printf("chroot failed: %s\n", strerror(errno));
    return 1;
  }
  printf("ready\n");
  if (jail || (strcmp(argv[1], "loop") == 0 && argc == 3)) {
    const char* stop_file = argv[argc - 1];
    unsigned long i = 0;
    for (;; i++) {
      if (!round_ok(i)) {
        printf("corrupt at %lu\n", i);
        return 1;
      }
      if (i % 4096 == 0 && access(stop_file, F_OK) == 0) break;
    }
    printf("ok %lu\n", i);
    return 0;
  }
  if (strcmp(argv[1], "read") == 0) {
    char line[64];
    ssize_t n = read(0, line, sizeof line);
    if (n < 0) {
      printf("read failed: %s\n", strerror(errno));
      return 1;
    }
    for (unsigned long i = 0; i < 200000; i++)
      if (!round_ok(i)) return 1;
    printf("ok read %zd\n", n);
    return 0;
  }
  if (strcmp(argv[1], "sleep") == 0 && argc == 3) {
    double seconds = atof(argv[2]), start = now();
    struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    if (nanosleep(&t, NULL) != 0) {
      printf("nanosleep failed: %s\n", strerror(errno));
      return 1;
    }
    double slept = now() - start;
    for (unsigned long i = 0; i < 200000; i++)
      if (!round_ok(i)) return 1;
    printf("ok slept %.3f\n", slept);
    return slept >= seconds ? 0 : 1;
  }
  int churn = strcmp(argv[1], "churn") == 0 && argc == 3;
  pthread_t starter;
  if (churn && pthread_create(&starter, NULL, start_ending_threads, NULL) != 0) return 1;
  if (churn || (strcmp(argv[1], "shell") == 0 && argc == 3)) {
    char command[64];
    snprintf(command, sizeof command, "sleep %d", atoi(argv[2]));
    int status = system(command);
    printf("ok shell %d\n", status);
    return status == 0 ? 0 : 1;
  }
  return 2;
}
