// Whether a separate debug file could be where libdw (0.188) looks for one: by build
// id under /usr/lib/debug/.build-id, and by the file's .gnu_debuglink name beside it,
// in .debug/ beside it and under /usr/lib/debug (with the file's directory and each
// of its tails); without a debuglink, by the file's name + ".debug" and by its own
// name in those places (not the file itself). libdw tries each of these with open(),
// which a FIFO there blocks forever; and when none matches it loads its debuginfod
// client (libdebuginfod, libcurl, TLS...: a tenth of the time a short recording takes
// to read) even when no server is configured. SourceLines asks libdw only when this
// says it may find one.
#pragma once

#include <string>

namespace nmprof::profile {

enum class DebugFiles {
  None,        // no file at any of those paths
  Present,     // a regular file at one of them (libdw checks that it matches)
  NotRegular,  // something at one of them that open() could block on
};

// `file`: the module's absolute path; `debuglink`: its .gnu_debuglink name, or ""
// (libdw then looks for the file's name + ".debug"); `build_id`: hex, or "".
DebugFiles debug_files_at(const std::string& file, const std::string& debuglink, const std::string& build_id);

// Whether the user configured debuginfod servers (DEBUGINFOD_URLS, as libdebuginfod reads it).
bool debuginfod_configured();

}  // namespace nmprof::profile
