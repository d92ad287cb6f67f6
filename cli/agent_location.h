// Where libnmprof.so is: <dir of nmprof>/../lib/nmprof/libnmprof.so, the same
// relative place in the build tree and when installed (NMPROF_AGENT overrides it).
//
// NMPROF_AGENT is the only NMPROF_* variable the CLI reads (NMPROF_OPTIONS is the
// agent's, and `run` sets it for its command). Under sudo (SUDO_UID set) or with
// real and effective ids that differ, the environment is the invoking user's:
// `sudo -E nmprof attach` must not load, or copy into another user's /tmp, a file
// that user names. It is then ignored, with one line saying so, unless the user
// passes --trust-environment.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nmprof::cli {

// Adds --trust-environment to `command`.
void add_trust_environment_flag(CLI::App* command, bool& trust);

// The absolute path of the agent, or an empty string with *error set.
std::string find_agent(bool trust_environment, std::string* error);

}  // namespace nmprof::cli
