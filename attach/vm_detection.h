// Whether a process is a HotSpot JVM that can be attached to, judged from what it
// mapped (/proc/<pid>/maps) and how it was started (cmdline, environment).
#pragma once

#include <string_view>
#include <vector>

#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

enum class VmKind { hotspot, openj9, none };

VmKind vm_kind_from_maps(std::string_view maps);

// True if `path` is mapped (the pathname column of a maps line).
bool maps_contain_file(std::string_view maps, std::string_view path);
// The files mapped, as paths (a deleted file's too, without " (deleted)").
std::vector<std::string_view> mapped_files(std::string_view maps);

// Whether the options the JVM started with end up at -XX:+DisableAttachMechanism.
// HotSpot reads JAVA_TOOL_OPTIONS, then JDK_JAVA_OPTIONS and the command line, then
// _JAVA_OPTIONS; the last setting wins. Both inputs are NUL-separated as in procfs.
bool attach_disabled_by_options(std::string_view cmdline, std::string_view environ);

// Errors: not a JVM, an OpenJ9 JVM, attach disabled by the command line, no access.
Result<void> check_attachable_hotspot(const TargetProcess& target);

}  // namespace nmprof::attach
