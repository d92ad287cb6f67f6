#include "cli/agent_location.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace nmprof::cli {
namespace {

// Whether the environment may be someone else's than the user nmprof runs as.
bool environment_of_another_user() {
  return getuid() != geteuid() || getgid() != getegid() || getenv("SUDO_UID") != nullptr;
}

}  // namespace

void add_trust_environment_flag(CLI::App* command, bool& trust) {
  command->add_flag("--trust-environment", trust,
                    "Under sudo, still take NMPROF_AGENT from the environment (ignored there by default)");
}

std::string find_agent(bool trust_environment, std::string* error) {
  namespace fs = std::filesystem;
  if (const char* env = getenv("NMPROF_AGENT"); env && *env) {
    if (!trust_environment && environment_of_another_user()) {
      std::cerr << "nmprof: ignoring NMPROF_AGENT under sudo (the invoking user's environment); pass "
                   "--trust-environment to use it\n";
    } else {
      std::error_code ec;
      fs::path p = fs::absolute(env, ec);
      if (!ec && fs::exists(p)) return p.string();
      *error = std::string("NMPROF_AGENT=") + env + " does not exist";
      return {};
    }
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
