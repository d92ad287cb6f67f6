#include "attach/target_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "attach/as_target.h"
#include "attach/fd_io.h"
#include "common/safe_file.h"

namespace nmprof::attach {
namespace {

// The directory a target path's last component is in, and that component.
struct Place {
  UniqueFd dir;
  std::string name;
};

Result<Place> locate(const TargetDirs& dirs, std::string_view path, const std::string& label) {
  int base = dirs.cwd;
  if (!path.empty() && path[0] == '/') {
    base = dirs.root;
    path.remove_prefix(std::min(path.find_first_not_of('/'), path.size()));
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string_view::npos ? "." : std::string(path.substr(0, slash));
  Place place{UniqueFd(openat(base, dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
              std::string(path.substr(slash == std::string_view::npos ? 0 : slash + 1))};
  int checked = place.dir ? safe_file::check_directory(place.dir.get()) : -errno;
  if (checked < 0) return Error{"cannot open " + label + ": " + safe_file::error_text(checked)};
  return place;
}

std::string describe(const TargetProcess& target, std::string_view path) {
  return std::string(path) + " of process " + std::to_string(target.pid) + " (" + client_path(target, path) + ")";
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

Result<void> done(const Result<UniqueFd>& result) {
  if (!result) return result.error();
  return {};
}

}  // namespace

std::string client_path(const TargetProcess& target, std::string_view path_in_target) {
  std::string proc = "/proc/" + std::to_string(target.pid);
  if (!path_in_target.empty() && path_in_target[0] == '/') return proc + "/root" + std::string(path_in_target);
  return proc + "/cwd/" + std::string(path_in_target);
}

Result<UniqueFd> open_in_target(const TargetProcess& target, std::string_view path_in_target, Owner owner) {
  std::string label = describe(target, path_in_target);
  return run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto place = locate(dirs, path_in_target, label);
    if (!place) return place.error();
    uid_t expected = owner == Owner::target ? geteuid() : safe_file::kAnyOwner;
    int fd = safe_file::open_owned(place->dir.get(), place->name.c_str(), O_RDONLY, expected, dirs.self_fds);
    if (fd < 0) return Error{"cannot open " + label + ": " + safe_file::error_text(fd)};
    return UniqueFd(fd);
  });
}

std::string unpredictable_name() {
  char random[32];
  // getrandom() fails only on kernels before 3.17, which nmprof does not run on.
  if (!safe_file::random_name(random, 26)) std::abort();
  return random;
}

Result<TargetFile> create_in_target(const TargetProcess& target, const std::string& path_in_target, mode_t mode) {
  std::string label = describe(target, path_in_target);
  auto created = run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto place = locate(dirs, path_in_target, label);
    if (!place) return place.error();
    int fd = safe_file::create_new(place->dir.get(), place->name.c_str(), O_RDWR, mode);
    if (fd < 0) return Error{"cannot create " + label + ": " + safe_file::error_text(fd)};
    return UniqueFd(fd);
  });
  if (!created) return created.error();
  return TargetFile{path_in_target, std::move(*created)};
}

bool shares_root_with(const TargetProcess& target) {
  struct stat theirs {}, ours {};
  return stat(("/proc/" + std::to_string(target.pid) + "/root/").c_str(), &theirs) == 0 && stat("/", &ours) == 0 &&
         theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

Result<TargetFile> place_in_target(const TargetProcess& target, const std::string& path_in_target,
                                   const std::string& local_file) {
  UniqueFd in(open(local_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) return Error{"cannot read " + local_file + ": " + std::strerror(errno)};
  auto out = create_in_target(target, path_in_target, 0700);
  if (!out) return out.error();
  char buffer[65536];
  for (;;) {
    ssize_t n = read(in.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return std::move(*out);
    if (n < 0 || !write_all(out->fd.get(), std::string_view(buffer, static_cast<size_t>(n)))) {
      std::string why = std::strerror(errno);
      (void)remove_from_target(target, out->path, out->fd.get());
      return Error{"cannot copy " + local_file + " to " + describe(target, out->path) + ": " + why};
    }
  }
}

Result<void> remove_from_target(const TargetProcess& target, std::string_view path_in_target, int same_as) {
  std::string label = describe(target, path_in_target);
  struct stat expected {};
  if (fstat(same_as, &expected) != 0) return Error{"cannot remove " + label + ": " + std::strerror(errno)};
  return done(run_as_target(target, [&](const TargetDirs& dirs) -> Result<UniqueFd> {
    auto place = locate(dirs, path_in_target, label);
    if (!place) return place.error();
    struct stat st {};
    if (fstatat(place->dir.get(), place->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return Error{"cannot remove " + label + ": " + std::strerror(errno)};
    if (!same_file(st, expected))
      return Error{"not removing " + label + ": it is no longer the file nmprof made or read"};
    if (unlinkat(place->dir.get(), place->name.c_str(), 0) != 0)
      return Error{"cannot remove " + label + ": " + std::strerror(errno)};
    return UniqueFd();
  }));
}

}  // namespace nmprof::attach
