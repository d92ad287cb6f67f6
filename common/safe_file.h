// Creating and opening files in directories other users can write (/tmp, a JVM's
// /tmp, a shared output directory) so that nothing planted there is ever used: no
// symbolic link is followed there, no FIFO or device node is opened, no file owned by
// someone else (or hard-linked to another name) is written, and the names nmprof
// makes up cannot be guessed. Every file is reached with openat() from a directory
// descriptor checked once, so renaming a directory meanwhile changes nothing.
//
// libc only, no exceptions, no heap: the agent uses it from its hooks and signal
// handlers as well as the CLI. Functions return a descriptor (or 0), or a negative
// error: -errno, or one of the k* codes below; error_text() says which in words.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace nmprof::safe_file {

constexpr int kNotRegular = -10001;     // a directory, FIFO, socket or device node
constexpr int kNotOwned = -10002;       // owned by another user
constexpr int kHardLinked = -10003;     // has other names: maybe someone else's file
constexpr int kUnsafeDir = -10004;      // others may write the directory and it is not sticky
constexpr int kNameTooLong = -10005;    // does not fit the buffer given
constexpr int kUntrustedLink = -10006;  // a link on the way that another user may have put there

// "not a regular file", "No such file or directory", ...
const char* error_text(int error);
// The errno closest to `error` (EPERM for the k* codes).
int to_errno(int error);

// Opens the directory of `path` ("." when it names none) as an O_PATH descriptor and
// points *name at its last component. Refuses a directory that every user may write
// but that is not sticky: anyone could replace a file in it after it was checked.
// The path is walked a component at a time from / (or the working directory), and
// a symbolic link on the way is followed only when no one else could have put it
// there: in a directory every user may write, only a link of ours (our file system
// uid, as set by the CLI under sudo) or of the directory's owner is followed, as
// fs.protected_symlinks does for sticky ones, whatever the sysctl says
// (kUntrustedLink otherwise).
int open_parent(const char* path, const char** name);

// Checks a directory descriptor as open_parent does.
int check_directory(int dir);

// Where the functions here open and close descriptors: openat(2) and close(2) unless
// set otherwise. The agent registers its own against a program that closes numbers
// it does not own (agent/safety/own_descriptors.h); what it gets from here, it
// closes with its ops too.
struct DescriptorOps {
  int (*open_at)(int dir, const char* path, int flags, mode_t mode);
  void (*close)(int fd);
};
void set_descriptor_ops(const DescriptorOps& ops);

// `length` random characters from [a-z0-9] (128 bits and more from 25 on) and a NUL.
bool random_name(char* out, size_t length);

// Creates the file `name` in `dir`; it must not exist (O_EXCL, O_NOFOLLOW).
// `flags`: O_WRONLY or O_RDWR, and O_CLOEXEC is always added.
int create_new(int dir, const char* name, int flags, mode_t mode);

// Creates a file named prefix + 26 random characters + suffix in `dir` and copies
// that name to `name` (of `size` bytes).
int create_unique(int dir, const char* prefix, const char* suffix, int flags, mode_t mode, char* name,
                  size_t size);

// For open_owned: any owner and any number of links (a file only read, such as an
// installed library).
constexpr uid_t kAnyOwner = static_cast<uid_t>(-1);

// Opens the existing `name` in `dir` only when it is a regular file with a single
// link owned by `owner`. It is looked at through an O_PATH descriptor first and
// reopened through /proc/self/fd (`self_fds`: that directory opened earlier, or -1),
// so that a FIFO or device node is never opened. `flags` as for open(2) (O_TRUNC too).
int open_owned(int dir, const char* name, int flags, uid_t owner, int self_fds = -1);

// create_new, or open_owned for geteuid() when the file exists already (a file of
// ours from an earlier run). flags without O_TRUNC: the caller truncates when ready.
int create_or_open_owned(int dir, const char* name, int flags, mode_t mode);

// 0 if `fd` is a regular file with a single link owned by `owner`.
int check_owned_regular(int fd, uid_t owner);

}  // namespace nmprof::safe_file
