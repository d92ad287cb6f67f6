// The lines of /proc/<pid>/status that attaching needs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nmprof::attach {

struct ProcessStatus {
  uid_t euid = 0;
  gid_t egid = 0;
  std::vector<gid_t> groups;  // supplementary groups
  // PID in the innermost PID namespace (last NSpid value); it names the attach files.
  // Kernels before 4.1 have no NSpid line: then 0.
  pid_t nspid = 0;
  uint64_t signals_caught = 0;   // SigCgt: bit n-1 = signal n
  uint64_t signals_ignored = 0;  // SigIgn

  // True if the process has a handler for `signal` (sending it is then harmless).
  bool catches(int signal) const;
};

// nullopt if a required line (Uid, Gid, SigCgt, SigIgn) is missing or malformed.
std::optional<ProcessStatus> parse_process_status(std::string_view text);

}  // namespace nmprof::attach
