// Ends with the status or signal given: exit_with status N | exit_with signal N
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  void* volatile p = malloc(1 << 20);
  free(p);
  if (strcmp(argv[1], "signal") == 0) {
    signal(atoi(argv[2]), SIG_DFL);
    raise(atoi(argv[2]));
  }
  return atoi(argv[2]);
}
