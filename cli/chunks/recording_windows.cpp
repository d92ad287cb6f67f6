#include "cli/chunks/recording_windows.h"

#include <unistd.h>

#include <cstring>

#include "cli/chunks/punched_records.h"
#include "cli/output/recording_merge.h"
#include "common/exit_watch_lock.h"
#include "common/safe_file.h"
#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/chunk_header.h"

namespace nmprof::cli {
namespace {

// Reads `length` bytes at `offset`; false when the file is shorter.
bool read_at(int fd, uint64_t offset, size_t length, std::vector<uint8_t>& out) {
  out.resize(length);
  for (size_t done = 0; done < length;) {
    ssize_t n = pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

RecordingWindows::~RecordingWindows() {
  for (auto& [name, recording] : recordings_)
    if (recording.fd >= 0) close(recording.fd);
}

void RecordingWindows::read_new(Recording& recording) {
  std::vector<uint8_t> header, records;
  uint64_t offset = 0;
  for (size_t image = 0; read_at(recording.fd, offset, jfr::kChunkHeaderSize, header); image++) {
    // Past a chunk's end as its header says now: the next image's chunk, or records the
    // agent appended to this one before it patched the header's size (a busy process).
    if (image > 0 && !jfr::has_chunk_magic(header)) break;
    jfr::ChunkHeader parsed = jfr::parse_chunk_header(header);
    // A chunk whose first write is not complete yet (its header is patched last).
    if (parsed.size < jfr::kChunkHeaderSize || parsed.metadata_offset == 0) break;
    if (image == recording.images.size()) {
      recording.images.emplace_back();
      recording.image_starts.push_back(offset);
    }
    ChunkWindow& window = recording.images[image];
    if (parsed.size > window.taken()) {
      if (!read_at(recording.fd, offset + window.taken(), parsed.size - window.taken(), records)) break;
      window.take(header, records);
    }
    offset += parsed.size;
  }
  recording.read_to = offset;
}

bool RecordingWindows::grew_since_read(const std::string& name, const Recording& recording) const {
  std::optional<uint64_t> size = files_.size_of(name);
  return size && *size > recording.read_to;
}

std::vector<uint8_t> RecordingWindows::cut(int64_t start_nanos, int64_t end_nanos, bool last, uint64_t most_bytes,
                                           std::vector<std::string>* warnings) {
  for (const std::string& name : files_.names()) recordings_.try_emplace(name);
  std::vector<uint8_t> out;
  for (auto& [name, recording] : recordings_) {
    if (recording.damaged) continue;
    if (recording.fd < 0) {
      // New, or its process ended (its blocks are gone) and nothing came since.
      if (!recording.ran_past_last_cut && !grew_since_read(name, recording)) continue;
      recording.fd = files_.open_file(name);
      if (recording.fd < 0) {
        warnings->push_back(name + " left out: " + safe_file::error_text(recording.fd));
        recording.damaged = true;
        continue;
      }
    }
    try {
      read_new(recording);
    } catch (const std::exception& e) {
      warnings->push_back(name + " left out from now on: " + e.what());
      recording.damaged = true;
      continue;
    }
    // The image that runs now, or ran past the last window's end (it ended in this
    // window, having written nothing since: an attach's agent that was stopped),
    // carries its live set on, whether it sampled or not. An exit watch may still make
    // the last write of one that ended. One that wrote after the window's end ran past
    // it (its header says when it last wrote: the file's mtime is also that of punches).
    bool running = still_recording(recording.fd) || exit_watch_lock::held(recording.fd);
    bool written_before_end = recording.images.empty() || recording.images.back().written_until_nanos() < end_nanos;
    bool runs_on = running || !written_before_end;
    for (size_t i = 0; i < recording.images.size(); i++) {
      ChunkWindow& window = recording.images[i];
      bool newest = i + 1 == recording.images.size();
      size_t room = most_bytes == 0 ? SIZE_MAX : most_bytes > out.size() ? most_bytes - out.size() : 0;
      // An image begun after the window's end (between it and its cut) is the next's.
      if (!last && window.started_nanos() >= end_nanos) continue;
      if (window.grew() || (newest && (running || recording.ran_past_last_cut)))
        window.cut(start_nanos, end_nanos, last ? INT64_MAX : end_nanos, newest && runs_on, room, out);
    }
    recording.ran_past_last_cut = runs_on;
    // Its process ended: closed until it grows, or, if it wrote after this window's
    // end (it ran past it), until the next window takes the rest.
    if (!running) {
      close(recording.fd);
      recording.fd = -1;
      if (!runs_on && !recording.released) finished_.push_back(name);
    }
  }
  return out;
}

void RecordingWindows::let_go_written(std::vector<std::string>* warnings) {
  for (auto& [name, recording] : recordings_) {
    // Only the files of running processes: an ended one's goes whole soon.
    if (!punching_ || recording.fd < 0 || recording.damaged) continue;
    int fd = files_.open_writable(name);
    if (fd < 0) continue;  // its process is ending: the next time
    for (size_t i = 0; i < recording.images.size() && punching_; i++)
      for (ChunkWindow::ByteRange range : recording.images[i].let_go()) {
        int error = punch_out_records(fd, recording.image_starts[i] + range.begin, recording.image_starts[i] + range.end);
        if (error == 0) continue;
        warnings->push_back("the recordings cannot give back the disk space of what the chunks hold (" +
                            std::string(strerror(-error)) + "): they grow on disk while the processes run");
        punching_ = false;
        break;
      }
    close(fd);
  }
  for (const std::string& name : finished_) {
    Recording& recording = recordings_[name];
    if (recording.fd >= 0 || recording.released) continue;  // it grew again since (an exec)
    // A file of the same name from now on is a new process's that got the same pid.
    if (files_.release(name))
      recordings_.erase(name);
    else
      recording.released = true;
  }
  finished_.clear();
}

}  // namespace nmprof::cli
