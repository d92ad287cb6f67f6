// Each image allocates, then execs the next: this program again, n more times, or
// once into a second program.
//   exec_chain self <n>        allocates 2 MB in image_site, then execs "self <n-1>"
//   exec_chain same <n>        the same, with the count in EXEC_CHAIN_LEFT: every image
//                              has the same command line
//   exec_chain into <program>  allocates 80 MB in alloc_in_A, then execs <program> B
//   exec_chain B               allocates 40 MB in alloc_in_B (the second program)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void allocate(long count, size_t size) {
  for (long i = 0; i < count; i++) {
    void* p = malloc(size);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

__attribute__((noinline)) void image_site(void) { allocate(20, 100000); }
__attribute__((noinline)) void alloc_in_A(void) { allocate(800, 100000); }
__attribute__((noinline)) void alloc_in_B(void) { allocate(400, 100000); }

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "self") == 0) {
    image_site();
    int n = atoi(argv[2]);
    if (n == 0) {
      puts("ok");
      return 0;
    }
    char next[16];
    snprintf(next, sizeof next, "%d", n - 1);
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "self", next, (char*)NULL);
    return 127;
  }
  if (argc == 3 && strcmp(argv[1], "same") == 0) {
    image_site();
    const char* left = getenv("EXEC_CHAIN_LEFT");
    int n = left ? atoi(left) : atoi(argv[2]);
    if (n == 0) {
      puts("ok");
      return 0;
    }
    char next[16];
    snprintf(next, sizeof next, "%d", n - 1);
    setenv("EXEC_CHAIN_LEFT", next, 1);
    fflush(stdout);
    execv("/proc/self/exe", argv);
    return 127;
  }
  if (argc == 3 && strcmp(argv[1], "into") == 0) {
    alloc_in_A();
    execl(argv[2], argv[2], "B", (char*)NULL);
    return 127;
  }
  if (argc == 2 && strcmp(argv[1], "B") == 0) {
    alloc_in_B();
    puts("ok");
    return 0;
  }
  return 2;
}
