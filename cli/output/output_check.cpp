#include "cli/output/output_check.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/output/invoking_user.h"
#include "cli/output/output_writer.h"
#include "cli/report/report_command.h"
#include "common/safe_file.h"

namespace nmprof::cli {
namespace {

// Room for what `run` makes beside the output: its staging directory
// ".nmprof-XXXXXX" and the per-process files in it ("<pid>.<n>.jfr" and the like).
constexpr size_t kStagingPathRoom = 64;

// access(W_OK) says yes to root everywhere, even on a read-only mount or in /proc:
// creating a file is the only sure test. Returns 0 or a safe_file error.
int probe_directory(int dir) {
  char name[64];
  int fd = safe_file::create_unique(dir, ".nmprof-probe-", "", O_WRONLY, 0600, name, sizeof name);
  if (fd < 0) return fd;
  close(fd);
  unlinkat(dir, name, 0);
  return 0;
}

std::string directory_of(const std::string& output) {
  size_t slash = output.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
}

}  // namespace

bool check_output(const std::string& output, std::string* error) {
  if (output == "-") {
    *error = "-o - (standard output) is for nmprof report; run and attach write a file (the command's output "
             "goes to standard output)";
    return false;
  }
  AsInvokingUser as_user;
  std::string dir_name = directory_of(output);
  const char* name = nullptr;
  int dir = safe_file::open_parent(output.c_str(), &name);
  if (dir == -EISDIR) {
    *error = "-o " + output + " is a directory; give a file name";
    return false;
  }
  if (dir < 0) {
    *error = "cannot write " + output + ": " +
             (dir == -ENOENT ? "directory " + dir_name + " does not exist" : std::string(safe_file::error_text(dir)));
    return false;
  }
  long name_max = fpathconf(dir, _PC_NAME_MAX);
  // A converted format (x.html) is made from a recording nmprof writes beside it,
  // .nmprof-x.jfr: a longer name, which must fit too.
  size_t name_length =
      std::max(strlen(name), std::filesystem::path(report::recording_path(output, false)).filename().string().size());
  struct stat st {};
  bool exists = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  int probed = probe_directory(dir);
  if (name_max > 0 && name_length > static_cast<size_t>(name_max)) {
    *error = "cannot write " + output + ": file name too long (" + std::to_string(name_length) + " bytes" +
             (name_length > strlen(name) ? " with the .nmprof-*.jfr made beside it" : "") + ", at most " +
             std::to_string(name_max) + " here)";
  } else if (output.size() + kStagingPathRoom >= PATH_MAX) {
    *error = "cannot write " + output + ": path too long (" + std::to_string(output.size()) + " bytes, at most " +
             std::to_string(PATH_MAX - 1 - kStagingPathRoom) + ")";
  } else if (probed == -ENOENT) {  // the directory exists: a virtual file system such as /proc
    *error = "cannot write " + output + ": files cannot be created in " + dir_name;
  } else if (probed != 0) {
    *error = "cannot write " + output + ": directory " + dir_name + " is not writable (" +
             safe_file::error_text(probed) + ")";
  } else if (const char* why = refusal_to_replace(dir, name)) {
    *error = "-o " + output + " " + why;
  } else if (exists && S_ISREG(st.st_mode) && faccessat(dir, name, W_OK, AT_EACCESS) != 0) {
    *error = "cannot write " + output + ": permission denied";
  } else {
    close(dir);
    return true;
  }
  close(dir);
  return false;
}

}  // namespace nmprof::cli
