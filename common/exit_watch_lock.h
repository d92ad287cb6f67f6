// How the agent's exit watch (agent/safety/exit_watch.h) tells that it may still
// write a recording whose process has ended: it holds a write lock (an open file
// description lock, F_OFD_SETLK) of its own description of the file on one byte far
// beyond anything written, from its start to its end. The launcher, before it joins
// the recordings of processes that ended, waits until no such lock is left (a
// program that left by a raw exit_group has its last write made by the watch, a
// moment after it died). The agent's own flock (OutputFile) is another kind of lock:
// the two do not meet.
#pragma once

#include <fcntl.h>
#include <time.h>

namespace nmprof::exit_watch_lock {

constexpr off_t kByte = off_t{1} << 62;

inline struct flock lock_of(short type) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = kByte;
  lock.l_len = 1;
  return lock;
}

// The watch's side: fd is its own description of the recording, open for writing.
inline bool take(int fd) {
  struct flock lock = lock_of(F_WRLCK);
  return fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

// The launcher's side: whether a watch may still write the file open as fd (any mode).
inline bool held(int fd) {
  struct flock lock = lock_of(F_RDLCK);
  return fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

// Waits until no watch holds the file, at most timeout_ms; false when one still does.
inline bool wait_until_released(int fd, int timeout_ms) {
  for (int waited = 0; held(fd); waited += 5) {
    if (waited >= timeout_ms) return false;
    struct timespec five_ms = {0, 5000000};
    nanosleep(&five_ms, nullptr);
  }
  return true;
}

}  // namespace nmprof::exit_watch_lock
