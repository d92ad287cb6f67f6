// The file one process records into. It is created on the first append (or, for a
// process that sampled nothing, when it ends, or before the process changes its user id:
// open_now()), claimed with an exclusive flock (a second
// process given the same path, e.g. a forked child, writes `name.<pid>.ext`
// instead), and a complete JFR file after each append. Its descriptor is kept out of
// the program's way (own_descriptors.h): a program that closes every number moves it;
// one that closes it with a raw system call has it reopened by path, and what was
// appended stays. Each process image (exec) appends a
// chunk of its own: a file written since the process started is an earlier image's
// recording and is kept; an older one is replaced. It stops growing at its limits
// (size_limit.h). Needs no heap allocation once the paths are set, so it can be used
// from a signal handler.
#pragma once

#include <sys/types.h>

#include <string>

#include "agent/writing/size_limit.h"
#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof {

class OutputFile {
 public:
  // `path` is the expanded output path; `metadata_record` the encoded JFR metadata.
  // pid and process_start_millis (wall clock) are the recording process's.
  void reset(const std::string& path, long pid, int64_t process_start_millis, jfr::ByteBuffer metadata_record,
             const jfr::ChunkClock& clock);
  // Appends, unless that would take the file past a limit: then nothing is written,
  // stopped_growing() says which limit, and one more, small append (`last`, the
  // statistics saying so) may use the room kept for it. Nothing is written after it.
  bool append(const jfr::ConstantPools& pools, const jfr::ByteBuffer& events, uint64_t now_ticks,
              bool last = false);
  // Opens the file before the first append. True when it is ours to append to (or
  // already was). join_recent as the first append would (open_file()); false for a
  // process that sampled nothing, which still leaves a readable recording when it
  // ends, but only where there is none: the path is not held by another process and
  // holds nothing written since this one started (a shell's commands share a path);
  // never the pid-suffixed twin.
  bool open_now(bool join_recent);
  void close();
  // A description of its own of the file, opened for writing as the file was (held,
  // own_descriptors.h): for the exit watch. -1 when the file is not open or cannot be.
  int open_again() const;
  // In the exit watch, whose copy of the program's descriptors is gone: its own
  // description (open_again()) takes the file's place for the last write. False when
  // the file does not end where this image's last write ended (another image, exec'd
  // behind the agent's back, wrote it since): nothing is to be written then.
  bool write_through(int fd);
  // 0: no limit of the user's (kept across reset()).
  void limit_size(uint64_t max_bytes) { limit_.set_max_bytes(max_bytes); }
  // The file the user gets the recording in, when the agent writes another (nmprof
  // run's staging file): what its line saying the file stopped growing names.
  void show_as(const std::string& output) { shown_as_ = output; }
  FileLimit stopped_growing() const { return stopped_; }

  // How many process images before this one (exec) wrote chunks to this file (or to
  // its pid-suffixed twin): their pool keys are taken. Call after reset().
  unsigned earlier_images() const;

  bool failed() const { return failed_; }
  bool opened() const { return kept_ >= 0; }
  // The path actually written (the pid-suffixed one when the plain path was taken).
  const std::string& path() const { return using_alternate_ ? alternate_path_ : path_; }

 private:
  bool open_file(bool join_recent);
  // 0, or -errno / a safe_file code / kRecent: the file holds a recording written
  // since this process started, which is joined only when join_recent.
  int claim(const std::string& path, bool join_recent);
  bool begin_chunk(bool last);
  bool append_once(const jfr::ConstantPools& pools, const jfr::ByteBuffer& events, uint64_t now_ticks, bool last,
                   bool* lost);
  bool holds_earlier_image(int fd) const;
  unsigned chunks_of_earlier_images(const std::string& path) const;
  bool is_the_file(int fd) const;
  int use_descriptor();
  bool reopen();
  void cap_writer(int fd, uint64_t file_end, bool last);
  bool stop_or_fail(const char* what, bool last);
  bool fail(const char* what);

  // What the user knows the recording as: "out.jfr: the recording of process 12", or
  // the path written.
  std::string shown_name() const;

  std::string path_;
  std::string alternate_path_;
  std::string shown_as_;
  long pid_ = 0;
  int64_t process_start_millis_ = 0;
  bool using_alternate_ = false;
  jfr::ByteBuffer metadata_record_;
  jfr::ChunkClock clock_{};
  jfr::ChunkWriter writer_;
  int kept_ = -1;  // own_descriptors' slot of the file's descriptor
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool failed_ = false;
  SizeLimit limit_;
  FileLimit cap_by_ = jfr::schema::kGrowing;  // the limit the writer's cap comes from
  FileLimit stopped_ = jfr::schema::kGrowing;
};

}  // namespace nmprof
