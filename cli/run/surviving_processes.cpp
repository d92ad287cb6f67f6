#include "cli/run/surviving_processes.h"

#include <fstream>

namespace nmprof::cli {

std::vector<SurvivingProcess> surviving_processes(const std::vector<pid_t>& pids) {
  std::vector<SurvivingProcess> found;
  for (pid_t pid : pids) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    if (!std::getline(comm, name)) continue;  // gone meanwhile
    found.push_back({pid, name});
  }
  return found;
}

}  // namespace nmprof::cli
