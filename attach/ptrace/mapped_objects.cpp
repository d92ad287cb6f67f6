#include "attach/ptrace/mapped_objects.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "attach/fd_io.h"
#include "attach/ptrace/elf_symbols.h"

namespace nmprof::attach {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool same_file(int fd, const Mapping& object) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == object.inode && major(st.st_dev) == object.dev_major &&
         minor(st.st_dev) == object.dev_minor;
}

// `path_fd` (an O_PATH descriptor, closed here: nothing was opened for reading
// yet, no device's open run, no FIFO waited on), opened for reading when it is the
// regular file `object` maps; -1 otherwise.
int reopen_if_mapped(int path_fd, const Mapping& object) {
  if (path_fd < 0) return -1;
  int fd = same_file(path_fd, object) ? open(("/proc/self/fd/" + std::to_string(path_fd)).c_str(),
                                             O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
                                      : -1;
  close(path_fd);
  return fd;
}

// `path` in the root directory `root` (the target's), as an O_PATH descriptor,
// without following any symbolic link the target may have planted on the way.
int open_in_root(const std::string& root, const std::string& path) {
  UniqueFd root_fd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return -1;
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, root_fd.get(), path.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ENOSYS)  // before Linux 5.6: the last component at least
    fd = openat(root_fd.get(), ("." + path).c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  return fd;
}

}  // namespace

std::string_view file_name_of(std::string_view path) { return path.substr(path.rfind('/') + 1); }

std::vector<Mapping> parse_maps(std::string_view maps) {
  std::vector<Mapping> result;
  while (!maps.empty()) {
    size_t end = maps.find('\n');
    std::string line(maps.substr(0, end));
    maps = end == std::string_view::npos ? std::string_view() : maps.substr(end + 1);
    Mapping m;
    char perms[5] = {};
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m.start, &m.end, perms,
               &m.offset, &m.dev_major, &m.dev_minor, &m.inode, &path_at) < 7)
      continue;
    m.executable = perms[2] == 'x';
    if (path_at > 0 && static_cast<size_t>(path_at) <= line.size()) m.path = line.substr(path_at);
    constexpr std::string_view kDeleted = " (deleted)";
    if (m.path.size() > kDeleted.size() && m.path.compare(m.path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
      m.path.resize(m.path.size() - kDeleted.size());
    result.push_back(std::move(m));
  }
  return result;
}

std::optional<Mapping> find_object(const std::vector<Mapping>& maps,
                                   const std::function<bool(std::string_view)>& matches) {
  for (const Mapping& m : maps)
    if (m.offset == 0 && m.inode != 0 && !m.path.empty() && m.path[0] == '/' && matches(file_name_of(m.path))) return m;
  return std::nullopt;
}

bool is_libc(std::string_view name) {
  return name == "libc.so.6" || (starts_with(name, "libc-2.") && name.substr(name.size() - 3) == ".so") ||
         starts_with(name, "ld-musl-") || starts_with(name, "libc.musl-");
}

bool is_dynamic_loader(std::string_view name) {
  return starts_with(name, "ld-linux") || starts_with(name, "ld-musl-") || starts_with(name, "ld-2.");
}

bool is_nmprof_agent(std::string_view name) {
  return name == "libnmprof.so" ||
         (starts_with(name, "nmprof-agent-") && name.size() > 3 && name.substr(name.size() - 3) == ".so");
}

Result<int> open_mapped_file(const TargetProcess& target, const Mapping& object) {
  std::string proc = "/proc/" + std::to_string(target.pid);
  // map_files/ is the mapped file itself, with no path to resolve: nothing the
  // target planted (a symbolic link, a FIFO) can redirect root. It needs
  // CAP_SYS_ADMIN on older kernels; the path in the target's root is the fallback.
  char range[64];
  snprintf(range, sizeof range, "/map_files/%" PRIx64 "-%" PRIx64, object.start, object.end);
  if (int fd = reopen_if_mapped(open((proc + range).c_str(), O_PATH | O_CLOEXEC), object); fd >= 0) return fd;
  if (int fd = reopen_if_mapped(open_in_root(proc + "/root", object.path), object); fd >= 0) return fd;
  return Error{"cannot read " + object.path + " as process " + std::to_string(target.pid) +
               " mapped it (replaced or deleted since, and /proc/" + std::to_string(target.pid) +
               "/map_files is not readable)"};
}

Result<uint64_t> remote_function(const TargetProcess& target, const Mapping& object, std::string_view name) {
  auto fd = open_mapped_file(target, object);
  if (!fd) return fd.error();
  UniqueFd file(*fd);
  auto layout = read_elf_layout(file.get());
  if (!layout) return Error{object.path + ": " + layout.error().message};
  auto value = find_dynamic_function(file.get(), name);
  if (!value) return Error{object.path + ": " + value.error().message};
  return object.start - layout->first_load_vaddr + *value;
}

}  // namespace nmprof::attach
