// close() as a program calls it, for the instructions the agent's close hook adds:
// each iteration duplicates a descriptor and closes the copy, and closes a number
// that is not open (what a daemon's close loop does for most numbers).
//   close_loop ITERATIONS
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  long iterations = atol(argv[1]);
  int fd = open("/dev/null", O_RDONLY);
  if (fd < 0) return 1;
  for (long i = 0; i < iterations; i++) {
    close(dup(fd));
    close(900);
  }
  return 0;
}
