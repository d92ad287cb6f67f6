// JEP 451 (JDK 21+): a JVM prints "WARNING: A JVM TI agent has been loaded
// dynamically (<library>)" on its own stderr the first time a library is loaded
// into it by attach, unless -XX:+EnableDynamicAgentLoading is on its command line
// (set by JAVA_TOOL_OPTIONS still warns). This predicts it so the CLI can tell the user.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "attach/hotspot_vm.h"
#include "attach/result.h"

namespace nmprof::attach {

struct DynamicLoadWarning {
  int jdk_version = 0;   // feature release: 8, 17, 21, 25, ...
  bool printed = false;  // loading `library` now will print the warning
};

// Asks the JVM (jcmd VM.version, VM.flags -all) and looks at its mapped libraries.
// A library mapped but never loaded as an agent (LD_PRELOAD) is taken as loaded.
Result<DynamicLoadWarning> forecast_dynamic_load_warning(const HotSpotVm& vm, std::string_view library);

// From `jcmd VM.version`: the line "JDK 17.0.15" gives 17, "JDK 8.0_392" gives 8.
std::optional<int> jdk_version_from_vm_version(std::string_view output);

// A flag's line in `jcmd VM.flags -all`:
//   "     bool EnableDynamicAgentLoading   = true    {product} {default}"
struct FlagSetting {
  std::string value;   // "true"
  std::string origin;  // "default", "command line", "environment", ...
};
std::optional<FlagSetting> flag_from_vm_flags(std::string_view output, std::string_view name);

}  // namespace nmprof::attach
