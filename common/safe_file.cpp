#include "common/safe_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace nmprof::safe_file {
namespace {

constexpr size_t kRandomLength = 26;
constexpr int kMaxLinks = 40;  // followed in one path, as the kernel allows

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

// The owner of the files we create and of the links we trust: the file system uid
// (setfsuid with an invalid id only says what it is).
uid_t file_system_uid() { return static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1))); }

// Whether the link owned by `link_owner` in the directory `dir` can only have been
// put there by us or by whoever owns the directory: it is ours or theirs, or no one
// else may write the directory (neither every user nor a group: a team's shared
// directory is as open to its members as /tmp). Sticky or not: a directory others
// may write without the sticky bit is only more open.
bool may_follow(int dir, uid_t link_owner) {
  struct stat st;
  if (fstat(dir, &st) != 0) return false;
  return !(st.st_mode & (S_IWOTH | S_IWGRP)) || link_owner == st.st_uid || link_owner == file_system_uid();
}

// The entry `name` of `dir` without following it: a directory (O_DIRECTORY, so that
// an automount point is mounted) or else whatever it is, a link included.
int open_entry(int dir, const char* name) {
  int fd = g_ops.open_at(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd >= 0 || errno != ENOTDIR) return fd;
  return g_ops.open_at(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
}

// Puts the target of `link` in front of what is left to walk, rest + *at, with a
// slash between them. 0 or a negative error.
int prepend_target(int link, char* rest, size_t* at) {
  size_t room = *at - 1;  // *at > 0: the link's name was in front
  ssize_t length = room > 0 ? readlinkat(link, "", rest, room) : 0;
  if (length < 0) return negative_errno();
  if (static_cast<size_t>(length) >= room) return kNameTooLong;  // or cut short
  *at -= static_cast<size_t>(length) + 1;
  memmove(rest + *at, rest, static_cast<size_t>(length));
  rest[*at + static_cast<size_t>(length)] = '/';
  return 0;
}

// The entry `entry` of `dir` is not a directory: a link is followed when it may be
// (prepend_target), anything else ends the walk. 0 or a negative error.
int follow(int dir, int entry, const struct stat& st, int* links, char* rest, size_t* at) {
  if (!S_ISLNK(st.st_mode)) return -ENOTDIR;
  if (++*links > kMaxLinks) return -ELOOP;
  if (!may_follow(dir, st.st_uid)) return kUntrustedLink;
  return prepend_target(entry, rest, at);
}

int open_root(const char* which) {
  int fd = g_ops.open_at(AT_FDCWD, which, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  return fd >= 0 ? fd : negative_errno();
}

// Opens the directory named by the first `length` bytes of `path`, a component at a
// time from / or the working directory. What is left to walk is kept at the end of
// `rest`, so that a link's target can be read in front of it.
int open_directory(const char* path, size_t length) {
  char rest[PATH_MAX];
  if (length >= sizeof rest) return kNameTooLong;
  size_t at = sizeof rest - 1 - length;
  memcpy(rest + at, path, length);
  rest[sizeof rest - 1] = '\0';
  int dir = open_root(rest[at] == '/' ? "/" : ".");
  for (int links = 0; dir >= 0;) {
    while (rest[at] == '/') at++;
    if (rest[at] == '\0') return dir;
    char* name = rest + at;
    at += strcspn(name, "/");
    char after = rest[at];
    rest[at] = '\0';  // for as long as the entry is opened
    int entry = open_entry(dir, name);  // "." and ".." too: ".." is the parent of what was reached, as in the kernel
    rest[at] = after;
    struct stat st;
    if (entry < 0 || fstat(entry, &st) != 0) {
      int error = negative_errno();
      if (entry >= 0) g_ops.close(entry);
      return close_with(dir, error);
    }
    if (S_ISDIR(st.st_mode)) {
      g_ops.close(std::exchange(dir, entry));
      continue;
    }
    int error = follow(dir, entry, st, &links, rest, &at);
    g_ops.close(entry);
    if (error) return close_with(dir, error);
    if (rest[at] == '/') g_ops.close(std::exchange(dir, open_root("/")));
  }
  return dir;
}

}  // namespace

void set_descriptor_ops(const DescriptorOps& ops) { g_ops = ops; }

const char* error_text(int error) {
  switch (error) {
    case kNotRegular: return "not a regular file";
    case kNotOwned: return "owned by another user";
    case kHardLinked: return "has other hard links";
    case kUnsafeDir: return "the directory is writable by every user and not sticky";
    case kUntrustedLink:
      return "the path goes through a symbolic link that another user owns in a directory every user may write "
             "(followed only when it is yours or the directory owner's)";
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
  *name = slash ? slash + 1 : path;
  if (**name == '\0') return -EISDIR;
  size_t length = !slash ? 0 : slash == path ? 1 : static_cast<size_t>(slash - path);
  int dir = open_directory(path, length);
  if (dir < 0) return dir;
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
