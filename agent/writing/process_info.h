// What the recording says about the process it comes from (nmprof.Process).
#pragma once

#include <cstdint>
#include <string>

namespace nmprof {

struct ProcessInfo {
  long pid = 0;
  long parent_pid = 0;
  std::string command_line;  // arguments joined by spaces, shell-quoted where needed
  std::string executable;    // resolved path of the running image
  std::string host;
  int64_t start_millis = 0;  // when the process (not the agent) started, ms since the epoch
};

ProcessInfo read_process_info();
// The command line as it is now: a process may retitle itself (php-fpm's workers,
// redis, postgres overwrite their arguments).
std::string read_command_line();

}  // namespace nmprof
