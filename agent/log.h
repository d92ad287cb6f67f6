// One-line diagnostics on stderr, prefixed "nmprof: ". Safe to call from hooks and
// signal handlers: formats into a stack buffer and issues a single write(2).
#pragma once

namespace nmprof {

void log_line(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace nmprof
