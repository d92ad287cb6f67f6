// Whether a process is under seccomp, as /proc/PID/status says: "Seccomp:" (0 none,
// 1 strict, 2 filter) and, since Linux 5.9, "Seccomp_filters:" (how many filters).
// Shared by the agent (its own process) and the CLI (its own, and attach's target).
#pragma once

#include <string_view>

namespace nmprof {

struct SeccompStatus {
  int mode = 0;      // 0: none, 1: strict, 2: filter
  int filters = -1;  // -1: the kernel does not say
  bool filtered() const { return mode != 0; }
  // How many filters to count it as: 1 where the kernel does not say.
  int filter_count() const { return mode == 0 ? 0 : filters > 0 ? filters : 1; }
};

inline SeccompStatus parse_seccomp_status(std::string_view status) {
  SeccompStatus s;
  auto number_after = [&status](std::string_view key) {
    size_t at = status.find(key);
    if (at == std::string_view::npos || (at != 0 && status[at - 1] != '\n')) return -1;
    int value = -1;
    for (size_t i = at + key.size(); i < status.size() && status[i] != '\n'; i++) {
      char c = status[i];
      if (c >= '0' && c <= '9')
        value = (value < 0 ? 0 : value * 10) + (c - '0');
      else if (value >= 0)
        break;
    }
    return value;
  };
  int mode = number_after("Seccomp:");
  s.mode = mode < 0 ? 0 : mode;
  s.filters = number_after("Seccomp_filters:");
  return s;
}

}  // namespace nmprof
