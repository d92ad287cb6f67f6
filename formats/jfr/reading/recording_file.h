// A recording's file, mapped (common/mapped_file.h) for reading.
#pragma once

#include <string>

#include "common/mapped_file.h"

namespace nmprof::jfr {

// Throws std::system_error ("cannot open PATH: reason") when the file cannot be read.
MappedFile map_recording(const std::string& path);
// The file open as `fd` (not taken: the caller closes it); `name` for messages.
MappedFile map_recording(int fd, const std::string& name);

}  // namespace nmprof::jfr
