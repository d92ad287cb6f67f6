#include "attach/dynamic_load_warning.h"

#include <charconv>

#include "attach/protocol.h"
#include "attach/vm_detection.h"

namespace nmprof::attach {
namespace {

constexpr int kFirstWarningJdk = 21;

std::string_view trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    visit(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

}  // namespace

std::optional<int> jdk_version_from_vm_version(std::string_view output) {
  std::optional<int> version;
  for_each_line(output, [&](std::string_view line) {
    constexpr std::string_view kPrefix = "JDK ";
    if (version || line.substr(0, kPrefix.size()) != kPrefix) return;
    line.remove_prefix(kPrefix.size());
    int feature = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), feature);
    if (ec == std::errc() && end != line.data()) version = feature;
  });
  return version;
}

std::optional<FlagSetting> flag_from_vm_flags(std::string_view output, std::string_view name) {
  std::optional<FlagSetting> setting;
  for_each_line(output, [&](std::string_view line) {
    // <type> <name> = <value> {<kind>} {<origin>}
    size_t equals = line.find('=');
    size_t origin = line.rfind('{');
    if (setting || equals == std::string_view::npos || origin == std::string_view::npos || origin < equals) return;
    std::string_view declaration = trim(line.substr(0, equals));
    size_t space = declaration.find_last_of(" \t");
    if (space == std::string_view::npos || declaration.substr(space + 1) != name) return;
    std::string_view rest = trim(line.substr(equals + 1, origin - equals - 1));
    std::string_view value = rest.substr(0, rest.find_first_of(" \t"));
    std::string_view origin_text = line.substr(origin + 1);
    origin_text = origin_text.substr(0, origin_text.find('}'));
    setting = FlagSetting{std::string(value), std::string(origin_text)};
  });
  return setting;
}

Result<DynamicLoadWarning> forecast_dynamic_load_warning(const HotSpotVm& vm, std::string_view library) {
  std::string jvm = "JVM " + std::to_string(vm.process().pid);
  auto version_output = vm.jcmd("VM.version");
  if (!version_output) return version_output.error();
  auto version = jdk_version_from_vm_version(*version_output);
  if (!version) {
    return Error{"cannot tell the JDK version of " + jvm + " from its VM.version output: '" +
                 one_line(version_output->substr(0, 120)) + "'"};
  }
  DynamicLoadWarning forecast{*version, false};
  if (*version < kFirstWarningJdk) return forecast;

  // The JVM warns only for the first load of a library.
  auto maps = read_proc_file(vm.process(), "maps");
  if (!maps) return maps.error();
  if (maps_contain_file(*maps, library)) return forecast;

  auto flags = vm.jcmd("VM.flags -all");
  if (!flags) return flags.error();
  auto setting = flag_from_vm_flags(*flags, "EnableDynamicAgentLoading");
  if (!setting) return Error{jvm + " (JDK " + std::to_string(*version) + ") does not list EnableDynamicAgentLoading"};
  // A JVM with the flag off refuses the load instead (load_agent reports that).
  forecast.printed = setting->value == "true" && setting->origin != "command line";
  return forecast;
}

}  // namespace nmprof::attach
