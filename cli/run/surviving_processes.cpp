#include "cli/run/surviving_processes.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "protocol/agent_options.h"

namespace nmprof::cli {
namespace {

std::string read_proc(pid_t pid, const char* what) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + what, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether the environment `environ` (NUL-separated) has options naming `directory`.
bool records_into(const std::string& environ, const std::string& directory) {
  const std::string prefix = std::string(kOptionsVariable) + "=";
  for (size_t at = 0; at < environ.size();) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    std::string_view entry(environ.data() + at, end - at);
    if (entry.starts_with(prefix) && entry.find(directory + "/") != std::string_view::npos) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::vector<SurvivingProcess> processes_recording_into(const std::string& staging_directory) {
  std::vector<SurvivingProcess> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  pid_t self = getpid();
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    if (!records_into(read_proc(static_cast<pid_t>(pid), "environ"), staging_directory)) continue;
    std::string name = read_proc(static_cast<pid_t>(pid), "comm");
    if (!name.empty() && name.back() == '\n') name.pop_back();
    found.push_back({static_cast<pid_t>(pid), name});
  }
  closedir(proc);
  return found;
}

}  // namespace nmprof::cli
