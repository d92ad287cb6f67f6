// Allocates (almost) nothing, then ends as asked: quiet_end return|_exit|sigterm
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "_exit") == 0) _exit(0);
  if (argc == 2 && strcmp(argv[1], "sigterm") == 0) raise(SIGTERM);
  return 0;
}
