#include "agent/writing/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/safety/error_text.h"
#include "agent/safety/own_descriptors.h"
#include "agent/writing/broker_client.h"
#include "agent/log.h"
#include "common/safe_file.h"

namespace nmprof {
namespace {

constexpr int kRecent = -EEXIST;  // claim(): not a safe_file code

// "dir/app.jfr" -> "dir/app.<pid>.jfr"; "dir/app" -> "dir/app.<pid>".
std::string with_pid(const std::string& path, long pid) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  std::string suffix = "." + std::to_string(pid);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1)
    return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

// The recording may be in a directory others can write (/tmp): it is created 0600
// (it holds the command line), and an existing file is used only when it is a
// regular file of ours (safe_file.h). Under nmprof run, nmprof opens it
// (broker_client.h); by path when nmprof is gone. A held descriptor
// (own_descriptors.h), or -errno / a safe_file code.
int open_recording(const char* path, int flags, bool create) {
  if (broker_client::connected()) {
    const char* slash = strrchr(path, '/');
    int fd = broker_client::open(slash ? slash + 1 : path, flags | (create ? O_CREAT : 0));
    if (fd != -ENOTCONN) return fd;
  }
  const char* name;
  int dir = safe_file::open_parent(path, &name);
  if (dir < 0) return dir;
  int fd = create ? safe_file::create_or_open_owned(dir, name, flags, 0600)
                  : safe_file::open_owned(dir, name, flags, geteuid());
  own_descriptors::close_held(dir);
  return fd;
}

}  // namespace

void OutputFile::reset(const std::string& path, long pid, int64_t process_start_millis,
                       jfr::ByteBuffer metadata_record, const jfr::ChunkClock& clock) {
  close();
  path_ = path;
  pid_ = pid;
  process_start_millis_ = process_start_millis;
  alternate_path_ = with_pid(path, pid);
  using_alternate_ = false;
  metadata_record_ = std::move(metadata_record);
  clock_ = clock;
  failed_ = false;
  stopped_ = jfr::schema::kGrowing;
}

int OutputFile::claim(const std::string& path, bool join_recent) {
  // No truncation before holding the lock: that would destroy the owner's recording.
  int fd = open_recording(path.c_str(), O_WRONLY, true);
  if (fd < 0) return fd;
  int error = 0;
  // Held by another process: EWOULDBLOCK. Any other failure (ENOLCK on some network
  // file systems, EPERM from a seccomp filter) leaves the file unlocked but ours.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    error = -errno;
  else if (holds_earlier_image(fd))
    error = join_recent ? 0 : kRecent;
  else if (ftruncate(fd, 0) != 0)
    error = -errno;
  if (error != 0) {
    own_descriptors::close_held(fd);
    return error;
  }
  struct stat st;
  fstat(fd, &st);
  device_ = st.st_dev;
  inode_ = st.st_ino;
  // Out of the way of loops that close the low numbers (the lock goes with it).
  kept_ = own_descriptors::keep(fd);
  return kept_ >= 0 ? 0 : -errno;
}

// Written since this process started: by the image that exec'd this one (same pid,
// same start time). A file left by an earlier process is older than this one.
bool OutputFile::holds_earlier_image(int fd) const {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size == 0) return false;
  int64_t modified_millis = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  return modified_millis >= process_start_millis_;
}

unsigned OutputFile::chunks_of_earlier_images(const std::string& path) const {
  int fd = open_recording(path.c_str(), O_RDONLY, false);
  if (fd < 0) return 0;
  unsigned chunks = 0;
  struct stat st;
  if (holds_earlier_image(fd) && fstat(fd, &st) == 0) {
    // Chunk headers: "FLR\0", version, then the chunk's size (big-endian).
    uint8_t header[16];
    for (off_t at = 0; pread(fd, header, sizeof header, at) == sizeof header && memcmp(header, "FLR", 4) == 0;) {
      uint64_t size = 0;
      for (int i = 8; i < 16; i++) size = size << 8 | header[i];
      if (size < sizeof header || size > static_cast<uint64_t>(st.st_size - at)) break;
      at += static_cast<off_t>(size);
      chunks++;
    }
  }
  own_descriptors::close_held(fd);
  return chunks;
}

unsigned OutputFile::earlier_images() const {
  return chunks_of_earlier_images(path_) + chunks_of_earlier_images(alternate_path_);
}

// join_recent: a path held by another process, or holding a recording written since
// this one started, is joined (the pid-suffixed twin for the former); otherwise it is
// left alone (false, without a word).
bool OutputFile::open_file(bool join_recent) {
  int error = claim(path_, join_recent);
  if (error == -EWOULDBLOCK && join_recent) {
    error = claim(alternate_path_, true);
    using_alternate_ = error == 0;
  }
  if (error == 0) return true;
  if (!join_recent && (error == -EWOULDBLOCK || error == kRecent)) return false;
  log_line("cannot write %s: %s; recording stopped, allocations pass through", path().c_str(),
           safe_file::error_text(error));
  failed_ = true;
  return false;
}

bool OutputFile::open_now(bool join_recent) {
  if (opened()) return true;
  return !failed_ && open_file(join_recent) && begin_chunk(false);
}

bool OutputFile::begin_chunk(bool last) {
  int fd = use_descriptor();
  if (fd < 0) return false;
  off_t end = lseek(fd, 0, SEEK_END);
  cap_writer(fd, end > 0 ? static_cast<uint64_t>(end) : 0, last);
  bool begun = writer_.begin(fd, metadata_record_, clock_);
  int error = errno;
  own_descriptors::release(kept_);
  errno = error;
  return begun || stop_or_fail("cannot write", last);
}

bool OutputFile::is_the_file(int fd) const {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == device_ && st.st_ino == inode_;
}

// The file's descriptor for the system calls until own_descriptors::release(kept_).
// The program may have taken its number with a raw system call (no hook sees that):
// the number is then forgotten, not closed, and the file reopened by path. -1, with
// one line and the recording stopped, when it cannot be.
int OutputFile::use_descriptor() {
  int fd = own_descriptors::acquire(kept_);
  if (fd >= 0 && is_the_file(fd)) return fd;
  if (fd >= 0) own_descriptors::release(kept_);
  if (!reopen()) return -1;
  fd = own_descriptors::acquire(kept_);
  return fd >= 0 ? fd : (fail("lost the output file"), -1);
}

bool OutputFile::reopen() {
  own_descriptors::forget_kept(kept_);
  kept_ = -1;
  int fd = open_recording(path().c_str(), O_WRONLY, false);
  if (fd < 0) return errno = safe_file::to_errno(fd), fail("lost the output file");
  if (!is_the_file(fd)) {
    own_descriptors::close_held(fd);
    return errno = ENOENT, fail("lost the output file");
  }
  kept_ = own_descriptors::keep(fd);
  return kept_ >= 0 || fail("lost the output file");
}

bool OutputFile::fail(const char* what) {
  if (!failed_) log_line("%s %s: %s; recording stopped", what, path().c_str(), error_text(errno));
  failed_ = true;
  return false;
}

void OutputFile::cap_writer(int fd, uint64_t file_end, bool last) {
  SizeLimit::Cap cap = limit_.cap(fd, file_end, last);
  writer_.cap_file_size(cap.end);
  cap_by_ = cap.by;
}

// A limit stopped the file (what did not fit was not written, or was cut off again):
// said once. Any other error, or one in the last append, ends the recording.
bool OutputFile::stop_or_fail(const char* what, bool last) {
  if (last) return failed_ = true, false;  // the line saying it stopped was written
  if (errno != EFBIG && errno != ENOSPC && errno != EDQUOT) return fail(what);
  stopped_ = errno == EFBIG && cap_by_ != jfr::schema::kGrowing ? cap_by_ : jfr::schema::kDiskNearlyFull;
  unsigned long long size = writer_.ok() ? writer_.file_end() : 0;
  log_line("%s stopped growing at %llu bytes: %s; recording stopped", shown_name().c_str(), size,
           jfr::schema::stop_reason_text(stopped_));
  return false;
}

std::string OutputFile::shown_name() const {
  if (shown_as_.empty()) return path();
  return shown_as_ + ": the recording of process " + std::to_string(pid_);
}

bool OutputFile::append(const jfr::ConstantPools& pools, const jfr::ByteBuffer& events, uint64_t now_ticks,
                        bool last) {
  if (failed_ || (stopped_ != jfr::schema::kGrowing && !last)) return false;
  if (!opened() && (!open_file(true) || !begin_chunk(last))) return false;
  bool lost = false;
  bool appended = append_once(pools, events, now_ticks, last, &lost);
  // A raw close(2) under the write: on the file reopened, what its header does not
  // cover is cut off, and the append made again.
  if (lost && reopen()) appended = append_once(pools, events, now_ticks, last, &lost);
  if (!appended) return !failed_ && stop_or_fail("cannot write", last);
  if (last) failed_ = true;
  return true;
}

// *lost: the write failed because the descriptor was no longer the file.
bool OutputFile::append_once(const jfr::ConstantPools& pools, const jfr::ByteBuffer& events, uint64_t now_ticks,
                             bool last, bool* lost) {
  int fd = use_descriptor();
  if (fd < 0) return false;
  bool appended = writer_.resume(fd);
  if (appended) {
    cap_writer(fd, writer_.file_end(), last);
    appended = writer_.append(pools, events, now_ticks);
  }
  int error = errno;
  *lost = !appended && !is_the_file(fd);
  own_descriptors::release(kept_);
  errno = error;
  return appended;
}

int OutputFile::open_again() const {
  if (!opened()) return -1;
  int fd = open_recording(path().c_str(), O_WRONLY, false);
  if (fd >= 0 && !is_the_file(fd)) {
    own_descriptors::close_held(fd);
    return -1;
  }
  return fd < 0 ? -1 : fd;
}

bool OutputFile::write_through(int fd) {
  struct stat st;
  if (!opened() || !writer_.ok() || fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != writer_.file_end())
    return false;
  int number = own_descriptors::acquire(kept_);
  if (number < 0) return false;
  bool taken = dup3(fd, number, O_CLOEXEC) == number;
  own_descriptors::release(kept_);
  return taken;
}

void OutputFile::close() {
  if (!opened()) return;
  int fd = own_descriptors::acquire(kept_);
  bool ours = fd >= 0 && is_the_file(fd);
  if (fd >= 0) own_descriptors::release(kept_);
  if (ours)
    own_descriptors::close_kept(kept_);
  else
    own_descriptors::forget_kept(kept_);
  kept_ = -1;
}

}  // namespace nmprof
