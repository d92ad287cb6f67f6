// How long attaching waits for the JVM. HotSpot itself never times out a request.
#pragma once

#include <chrono>
#include <string>

namespace nmprof::attach {

struct AttachTimeouts {
  // From the first look for the attach socket until the JVM accepts a connection
  // (it starts its listener on SIGQUIT, usually within a few ms).
  std::chrono::milliseconds listener{10'000};
  // From sending a request until the JVM has sent its whole reply.
  std::chrono::milliseconds reply{60'000};
};

// "10 s", "1.5 s", "300 ms"
inline std::string describe_duration(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  std::string seconds = std::to_string(ms / 1000);
  if (ms % 1000) seconds += "." + std::to_string(ms % 1000 / 100);
  return seconds + " s";
}

}  // namespace nmprof::attach
