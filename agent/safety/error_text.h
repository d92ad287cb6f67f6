// Error descriptions for the agent's messages. strerror() translates through
// gettext, which takes libc's locale lock: called from inside a malloc that
// setlocale() makes while holding that lock as writer, the nested lock fails with
// EDEADLK, its unlock releases setlocale's lock, and the lock is left corrupt (a
// UTF-8 shell then hangs in its next setlocale). strerrordesc_np only indexes a
// table: no lock, no allocation, no translation.
#pragma once

#include <cstring>

namespace nmprof {

inline const char* error_text(int error) {
  const char* text = strerrordesc_np(error);
  return text ? text : "unknown error";
}

}  // namespace nmprof
