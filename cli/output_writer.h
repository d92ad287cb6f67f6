// The user's output file (-o) is written whole or not at all: into a new file of an
// unpredictable name in the same directory (never through anything planted there),
// then renamed over the output in one step. Runs in parallel with the same -o all
// succeed, and the last to finish leaves its complete file. Under sudo the file is
// created and renamed with the invoking user's rights (invoking_user.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace nmprof::cli {

// Writes the contents into `fd`; false with *error on failure.
using OutputFiller = std::function<bool(int fd, std::string* error)>;

// False with a one-line *error; the output is then left as it was.
bool write_output(const std::string& output, std::string* error, const OutputFiller& fill);

// Copies the first `length` bytes of `source` to `out`.
bool copy_file(int source, size_t length, int out, std::string* error);

}  // namespace nmprof::cli
