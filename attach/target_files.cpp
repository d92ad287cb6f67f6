#include "attach/target_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "attach/as_target.h"
#include "attach/fd_io.h"

namespace nmprof::attach {
namespace {

std::optional<unsigned> environment_id(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  unsigned id = 0;
  auto [end, ec] = std::from_chars(text, text + std::strlen(text), id);
  if (ec != std::errc() || *end) return std::nullopt;
  return id;
}

// The directory a target path starts from and the rest of it, relative to that.
std::pair<int, std::string_view> resolve_base(const TargetDirs& dirs, std::string_view path) {
  if (path.empty() || path[0] != '/') return {dirs.cwd, path};
  size_t rest = path.find_first_not_of('/');
  return {dirs.root, rest == std::string_view::npos ? std::string_view(".") : path.substr(rest)};
}

std::string describe(const TargetProcess& target, std::string_view path) {
  return std::string(path) + " of process " + std::to_string(target.pid) + " (" + client_path(target, path) + ")";
}

Result<UniqueFd> open_source(const TargetProcess& target, std::string_view path) {
  return run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto [base, rest] = resolve_base(dirs, path);
    UniqueFd fd(openat(base, std::string(rest).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return Error{"cannot open " + describe(target, path) + ": " + std::strerror(errno)};
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Error{describe(target, path) + " is not a regular file"};
    }
    return fd;
  });
}

}  // namespace

std::string client_path(const TargetProcess& target, std::string_view path_in_target) {
  std::string proc = "/proc/" + std::to_string(target.pid);
  if (!path_in_target.empty() && path_in_target[0] == '/') return proc + "/root" + std::string(path_in_target);
  return proc + "/cwd/" + std::string(path_in_target);
}

FileOwner invoking_user() {
  auto sudo_uid = environment_id("SUDO_UID");
  auto sudo_gid = environment_id("SUDO_GID");
  if (geteuid() == 0 && sudo_uid && sudo_gid) return FileOwner{*sudo_uid, *sudo_gid};
  return FileOwner{getuid(), getgid()};
}

Result<UniqueFd> open_in_target(const TargetProcess& target, std::string_view path_in_target) {
  return open_source(target, path_in_target);
}

Result<void> copy_from_target(const TargetProcess& target, std::string_view path_in_target,
                              const std::string& destination, FileOwner owner) {
  auto source = open_source(target, path_in_target);
  if (!source) return source.error();
  return copy_to_user(source->get(), std::nullopt, describe(target, path_in_target), destination, owner);
}

Result<void> copy_to_user(int source, std::optional<size_t> length, const std::string& source_name,
                          const std::string& destination, FileOwner owner) {
  UniqueFd out(open(destination.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!out) return Error{"cannot create " + destination + ": " + std::strerror(errno)};
  struct stat st {};
  if (fstat(out.get(), &st) != 0 ||
      ((st.st_uid != owner.uid || st.st_gid != owner.gid) && fchown(out.get(), owner.uid, owner.gid) != 0)) {
    return Error{"cannot give " + destination + " to uid " + std::to_string(owner.uid) + ", gid " +
                 std::to_string(owner.gid) + ": " + std::strerror(errno)};
  }
  char buffer[65536];
  for (off_t at = 0;;) {
    size_t want = sizeof buffer;
    if (length) want = std::min(want, *length - static_cast<size_t>(at));
    if (want == 0) return {};
    ssize_t n = pread(source, buffer, want, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"cannot read " + source_name + ": " + std::strerror(errno)};
    if (n == 0) return {};
    if (!write_all(out.get(), std::string_view(buffer, static_cast<size_t>(n)))) {
      return Error{"cannot write " + destination + ": " + std::strerror(errno)};
    }
    at += n;
  }
}

bool shares_root_with(const TargetProcess& target) {
  struct stat theirs {}, ours {};
  return stat(("/proc/" + std::to_string(target.pid) + "/root/").c_str(), &theirs) == 0 && stat("/", &ours) == 0 &&
         theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

Result<void> place_in_target(const TargetProcess& target, const std::string& local_file,
                             std::string_view path_in_target) {
  UniqueFd in(open(local_file.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat local {};
  if (!in || fstat(in.get(), &local) != 0) return Error{"cannot read " + local_file + ": " + std::strerror(errno)};
  auto placed = run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto [base, rest] = resolve_base(dirs, path_in_target);
    std::string name(rest);
    struct stat existing {};
    if (fstatat(base, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(existing.st_mode) &&
        existing.st_size == local.st_size)
      return UniqueFd();  // there from an earlier attach
    unlinkat(base, name.c_str(), 0);
    UniqueFd fd(openat(base, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755));
    if (!fd) return Error{"cannot create " + describe(target, path_in_target) + ": " + std::strerror(errno)};
    return fd;
  });
  if (!placed) return placed.error();
  if (!*placed) return {};
  char buffer[65536];
  for (;;) {
    ssize_t n = read(in.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"cannot read " + local_file + ": " + std::strerror(errno)};
    if (n == 0) return {};
    if (!write_all(placed->get(), std::string_view(buffer, static_cast<size_t>(n))))
      return Error{"cannot write " + describe(target, path_in_target) + ": " + std::strerror(errno)};
  }
}

Result<void> remove_from_target(const TargetProcess& target, std::string_view path_in_target) {
  auto removed = run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto [base, rest] = resolve_base(dirs, path_in_target);
    if (unlinkat(base, std::string(rest).c_str(), 0) != 0) {
      return Error{"cannot remove " + describe(target, path_in_target) + ": " + std::strerror(errno)};
    }
    return UniqueFd();
  });
  if (!removed) return removed.error();
  return {};
}

}  // namespace nmprof::attach
