#include "cli/output_check.h"

#include <unistd.h>

#include <filesystem>

namespace nmprof::cli {

bool check_output(const std::string& output, std::string* error) {
  namespace fs = std::filesystem;
  fs::path path(output);
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = "cannot write " + output + ": directory " + dir.string() + " does not exist";
  } else if (access(dir.c_str(), W_OK) != 0) {
    *error = "cannot write " + output + ": directory " + dir.string() + " is not writable";
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
