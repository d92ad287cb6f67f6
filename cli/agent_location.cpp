#include "cli/agent_location.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace nmprof::cli {

std::string find_agent(std::string* error) {
  namespace fs = std::filesystem;
  if (const char* env = getenv("NMPROF_AGENT"); env && *env) {
    std::error_code ec;
    fs::path p = fs::absolute(env, ec);
    if (!ec && fs::exists(p)) return p.string();
    *error = std::string("NMPROF_AGENT=") + env + " does not exist";
    return {};
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    *error = "cannot find my own executable (/proc/self/exe): " + ec.message();
    return {};
  }
  fs::path agent = (self.parent_path() / ".." / "lib" / "nmprof" / "libnmprof.so").lexically_normal();
  if (!fs::exists(agent, ec)) {
    *error = "the agent is missing: expected " + agent.string() + " (set NMPROF_AGENT to its path)";
    return {};
  }
  return agent.string();
}

}  // namespace nmprof::cli
