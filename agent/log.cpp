#include "agent/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace nmprof {

void log_line(const char* format, ...) {
  char line[512] = "nmprof: ";
  size_t prefix = sizeof("nmprof: ") - 1;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line + prefix, sizeof line - prefix - 1, format, args);
  va_end(args);
  if (n < 0) return;
  size_t length = prefix + (static_cast<size_t>(n) < sizeof line - prefix - 1 ? static_cast<size_t>(n)
                                                                              : sizeof line - prefix - 2);
  line[length++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, length);
  (void)ignored;
}

}  // namespace nmprof
