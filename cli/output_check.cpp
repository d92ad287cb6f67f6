#include "cli/output_check.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>

namespace nmprof::cli {
namespace {

// access(W_OK) says yes to root everywhere, even on a read-only mount or in /proc:
// creating a file is the only sure test. Returns errno, or 0.
int probe_directory(const std::filesystem::path& dir) {
  std::string probe = (dir / ".nmprof-probe-XXXXXX").string();
  int fd = mkstemp(probe.data());
  if (fd < 0) return errno;
  close(fd);
  unlink(probe.c_str());
  return 0;
}

}  // namespace

bool check_output(const std::string& output, std::string* error) {
  namespace fs = std::filesystem;
  fs::path path(output);
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = "cannot write " + output + ": directory " + dir.string() + " does not exist";
  } else if (int failed = probe_directory(dir)) {
    *error = "cannot write " + output + ": directory " + dir.string() + " is not writable (" + strerror(failed) + ")";
  } else if (fs::is_directory(path, ec)) {
    *error = "-o " + output + " is a directory; give a file name";
  } else if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) {
    *error = "cannot write " + output + ": permission denied";
  } else {
    return true;
  }
  return false;
}

}  // namespace nmprof::cli
