// Where libnmprof.so is: <dir of nmprof>/../lib/nmprof/libnmprof.so, the same
// relative place in the build tree and when installed (NMPROF_AGENT overrides it).
#pragma once

#include <string>

namespace nmprof::cli {

// The absolute path of the agent, or an empty string with *error set.
std::string find_agent(std::string* error);

}  // namespace nmprof::cli
