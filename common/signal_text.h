// How nmprof names a signal in its messages: "signal 11 (SIGSEGV)".
#pragma once

#include <string.h>  // sigabbrev_np

#include <string>

namespace nmprof {

inline std::string signal_text(int signo) {
  const char* name = sigabbrev_np(signo);
  return "signal " + std::to_string(signo) + (name ? " (SIG" + std::string(name) + ")" : "");
}

}  // namespace nmprof
