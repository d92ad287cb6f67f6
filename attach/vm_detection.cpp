#include "attach/vm_detection.h"

#include <optional>
#include <string>
#include <vector>

namespace nmprof::attach {
namespace {

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(separators, pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) parts.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

std::string_view environment_value(std::string_view environ, std::string_view name) {
  for (std::string_view entry : split(environ, std::string_view("\0", 1))) {
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return {};
}

// Updates `disabled` with every DisableAttachMechanism setting among `options`.
void apply_options(const std::vector<std::string_view>& options, std::optional<bool>& disabled) {
  for (std::string_view option : options) {
    if (option == "-XX:+DisableAttachMechanism") disabled = true;
    if (option == "-XX:-DisableAttachMechanism") disabled = false;
  }
}

std::string_view pathname(std::string_view maps_line) {
  // address perms offset dev inode pathname
  size_t pos = 0;
  for (int field = 0; field < 5; field++) {
    pos = maps_line.find(' ', pos);
    if (pos == std::string_view::npos) return {};
    pos = maps_line.find_first_not_of(' ', pos);
    if (pos == std::string_view::npos) return {};
  }
  return maps_line.substr(pos);
}

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

VmKind vm_kind_from_maps(std::string_view maps) {
  bool libjvm = false;
  for (std::string_view line : split(maps, "\n")) {
    std::string_view name = file_name(pathname(line));
    // OpenJ9 ships a libjvm.so too (a redirector), so its own VM library decides.
    if (name.substr(0, 7) == "libj9vm") return VmKind::openj9;
    if (name == "libjvm.so") libjvm = true;
  }
  return libjvm ? VmKind::hotspot : VmKind::none;
}

std::vector<std::string_view> mapped_files(std::string_view maps) {
  constexpr std::string_view kDeleted = " (deleted)";
  std::vector<std::string_view> files;
  for (std::string_view line : split(maps, "\n")) {
    std::string_view path = pathname(line);
    if (path.size() > kDeleted.size() && path.substr(path.size() - kDeleted.size()) == kDeleted)
      path.remove_suffix(kDeleted.size());
    if (!path.empty() && path[0] == '/' && (files.empty() || files.back() != path)) files.push_back(path);
  }
  return files;
}

bool maps_contain_file(std::string_view maps, std::string_view path) {
  for (std::string_view file : mapped_files(maps)) {
    if (file == path) return true;
  }
  return false;
}

bool attach_disabled_by_options(std::string_view cmdline, std::string_view environ) {
  std::optional<bool> disabled;
  apply_options(split(environment_value(environ, "JAVA_TOOL_OPTIONS"), " \t\n"), disabled);
  apply_options(split(environment_value(environ, "JDK_JAVA_OPTIONS"), " \t\n"), disabled);
  apply_options(split(cmdline, std::string_view("\0", 1)), disabled);
  apply_options(split(environment_value(environ, "_JAVA_OPTIONS"), " \t\n"), disabled);
  return disabled.value_or(false);
}

Result<void> check_attachable_hotspot(const TargetProcess& target) {
  std::string process = "process " + std::to_string(target.pid) + " (" + target.name + ")";
  auto maps = read_proc_file(target, "maps");
  if (!maps) return maps.error();
  switch (vm_kind_from_maps(*maps)) {
    case VmKind::none:
      return Error{process + " is not a Java VM (no libjvm.so loaded); to profile a native program, "
                   "start it under nmprof: `nmprof run -- <command>`"};
    case VmKind::openj9:
      return Error{process + " is an OpenJ9 JVM, and nmprof attaches to HotSpot JVMs only; start it "
                   "under nmprof instead: `nmprof run -- <command>`"};
    case VmKind::hotspot:
      break;
  }
  auto cmdline = read_proc_file(target, "cmdline");
  if (!cmdline) return cmdline.error();
  auto environ = read_proc_file(target, "environ");
  if (!environ) return environ.error();
  if (attach_disabled_by_options(*cmdline, *environ)) {
    return Error{"JVM " + std::to_string(target.pid) +
                 " was started with -XX:+DisableAttachMechanism, so nothing can attach to it; restart it "
                 "without that option, or start it under nmprof: `nmprof run -- <command>`"};
  }
  return {};
}

}  // namespace nmprof::attach
