#include "common/safe_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nmprof::safe_file {
namespace {

constexpr size_t kRandomLength = 26;

int negative_errno() { return errno ? -errno : -EIO; }

DescriptorOps g_ops = {[](int dir, const char* path, int flags, mode_t mode) { return openat(dir, path, flags, mode); },
                       [](int fd) { close(fd); }};

// Closes `fd` keeping errno, and returns `error`.
int close_with(int fd, int error) {
  int saved = errno;
  g_ops.close(fd);
  errno = saved;
  return error;
}

// "/proc/self/fd/<fd>" or "<fd>" (relative to an open /proc/self/fd), without snprintf.
void fd_name(int fd, bool absolute, char* out) {
  char digits[16];
  int n = 0;
  do digits[n++] = static_cast<char>('0' + fd % 10); while ((fd /= 10) > 0);
  if (absolute) out = stpcpy(out, "/proc/self/fd/");
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
}

int check_stat(const struct stat& st, uid_t owner) {
  if (!S_ISREG(st.st_mode)) return kNotRegular;
  if (owner == kAnyOwner) return 0;
  if (st.st_uid != owner) return kNotOwned;
  if (st.st_nlink != 1) return kHardLinked;
  return 0;
}

}  // namespace

void set_descriptor_ops(const DescriptorOps& ops) { g_ops = ops; }

const char* error_text(int error) {
  switch (error) {
    case kNotRegular: return "not a regular file";
    case kNotOwned: return "owned by another user";
    case kHardLinked: return "has other hard links";
    case kUnsafeDir: return "the directory is writable by every user and not sticky";
    default: {
      // A table lookup: strerror() may translate, taking libc's locale lock, which
      // a hook can be called under.
      const char* text = strerrordesc_np(error == kNameTooLong ? ENAMETOOLONG : -error);
      return text ? text : "unknown error";
    }
  }
}

int to_errno(int error) {
  if (error == kNameTooLong) return ENAMETOOLONG;
  return error <= kNotRegular ? EPERM : -error;
}

int check_directory(int dir) {
  struct stat st;
  if (fstat(dir, &st) != 0) return negative_errno();
  if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) return kUnsafeDir;
  return 0;
}

int open_parent(const char* path, const char** name) {
  const char* slash = strrchr(path, '/');
  char dir_path[PATH_MAX];
  if (!slash) {
    strcpy(dir_path, ".");
    *name = path;
  } else {
    size_t length = slash == path ? 1 : static_cast<size_t>(slash - path);
    if (length >= sizeof dir_path) return kNameTooLong;
    memcpy(dir_path, path, length);
    dir_path[length] = '\0';
    *name = slash + 1;
  }
  if (**name == '\0') return -EISDIR;
  int dir = g_ops.open_at(AT_FDCWD, dir_path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0) return negative_errno();
  int checked = check_directory(dir);
  return checked < 0 ? close_with(dir, checked) : dir;
}

bool random_name(char* out, size_t length) {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[64];
  for (size_t done = 0; done < length;) {
    size_t want = length - done < sizeof bytes ? length - done : sizeof bytes;
    ssize_t got = getrandom(bytes, want, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    // 256 = 7 * 36 + 4: drop the top 4 values so that every character is as likely.
    for (ssize_t i = 0; i < got; i++)
      if (bytes[i] < 252) out[done++] = kAlphabet[bytes[i] % 36];
  }
  out[length] = '\0';
  return true;
}

int create_new(int dir, const char* name, int flags, mode_t mode) {
  int fd = g_ops.open_at(dir, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return negative_errno();
  struct stat st;
  if (fstat(fd, &st) != 0) return close_with(fd, negative_errno());
  return S_ISREG(st.st_mode) ? fd : close_with(fd, kNotRegular);
}

int create_unique(int dir, const char* prefix, const char* suffix, int flags, mode_t mode, char* name, size_t size) {
  size_t prefix_length = strlen(prefix);
  if (prefix_length + kRandomLength + strlen(suffix) >= size) return kNameTooLong;
  for (int attempt = 0; attempt < 8; attempt++) {
    memcpy(name, prefix, prefix_length);
    if (!random_name(name + prefix_length, kRandomLength)) return negative_errno();
    strcpy(name + prefix_length + kRandomLength, suffix);
    int fd = create_new(dir, name, flags, mode);
    if (fd != -EEXIST) return fd;
  }
  return -EEXIST;
}

int check_owned_regular(int fd, uid_t owner) {
  struct stat st;
  if (fstat(fd, &st) != 0) return negative_errno();
  return check_stat(st, owner);
}

int open_owned(int dir, const char* name, int flags, uid_t owner, int self_fds) {
  int path_fd = g_ops.open_at(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
  if (path_fd < 0) return negative_errno();
  struct stat checked;
  if (fstat(path_fd, &checked) != 0) return close_with(path_fd, negative_errno());
  if (S_ISLNK(checked.st_mode)) return close_with(path_fd, -ELOOP);
  if (int bad = check_stat(checked, owner)) return close_with(path_fd, bad);
  // Reopening the O_PATH descriptor opens exactly the inode checked, whatever the
  // name means by now (and the check after, that no one closed and reused its number).
  flags = (flags & ~O_CREAT) | O_CLOEXEC;
  char link[32];
  fd_name(path_fd, self_fds < 0, link);
  int fd = g_ops.open_at(self_fds < 0 ? AT_FDCWD : self_fds, link, flags, 0);
  close_with(path_fd, 0);
  if (fd >= 0) {
    struct stat opened;
    if (fstat(fd, &opened) != 0) return close_with(fd, negative_errno());
    return opened.st_dev == checked.st_dev && opened.st_ino == checked.st_ino ? fd : close_with(fd, -EAGAIN);
  }
  if (errno != ENOENT) return negative_errno();
  // No /proc: open the name again, never blocking on a FIFO swapped in meanwhile,
  // and keep (and truncate) it only if it is still the file checked.
  fd = g_ops.open_at(dir, name, (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK, 0);
  if (fd < 0) return negative_errno();
  struct stat opened;
  if (fstat(fd, &opened) != 0) return close_with(fd, negative_errno());
  if (opened.st_dev != checked.st_dev || opened.st_ino != checked.st_ino) return close_with(fd, -EAGAIN);
  if ((flags & O_TRUNC) && ftruncate(fd, 0) != 0) return close_with(fd, negative_errno());
  return fd;
}

int create_or_open_owned(int dir, const char* name, int flags, mode_t mode) {
  // Deleted between the two attempts: try again, a few times.
  for (int attempt = 0; attempt < 4; attempt++) {
    int fd = create_new(dir, name, flags, mode);
    if (fd != -EEXIST) return fd;
    fd = open_owned(dir, name, flags, geteuid());
    if (fd != -ENOENT) return fd;
  }
  return -EAGAIN;
}

}  // namespace nmprof::safe_file
