#include "cli/output/recording_windows.h"

#include <unistd.h>

#include "cli/output/recording_merge.h"
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
  for (auto& [name, recording] : recordings_) close(recording.fd);
}

void RecordingWindows::read_new(Recording& recording) {
  std::vector<uint8_t> header, records;
  uint64_t offset = 0;
  for (size_t image = 0; read_at(recording.fd, offset, jfr::kChunkHeaderSize, header); image++) {
    jfr::ChunkHeader parsed = jfr::parse_chunk_header(header);
    // A chunk whose first write is not complete yet (its header is patched last).
    if (parsed.size < jfr::kChunkHeaderSize || parsed.metadata_offset == 0) return;
    if (image == recording.images.size()) recording.images.emplace_back();
    ChunkWindow& window = recording.images[image];
    if (parsed.size > window.taken()) {
      if (!read_at(recording.fd, offset + window.taken(), parsed.size - window.taken(), records)) return;
      window.take(header, records);
    }
    offset += parsed.size;
  }
}

std::vector<uint8_t> RecordingWindows::cut(int64_t start_nanos, int64_t end_nanos, bool last,
                                           std::vector<std::string>* warnings) {
  for (const std::string& name : staging_.names(".jfr")) {
    if (recordings_.count(name)) continue;
    int fd = staging_.open_file(name);
    if (fd < 0) {
      warnings->push_back(name + " left out: " + safe_file::error_text(fd));
      recordings_[name].damaged = true;
      continue;
    }
    recordings_[name].fd = fd;
  }
  std::vector<uint8_t> out;
  for (auto& [name, recording] : recordings_) {
    if (recording.damaged) continue;
    try {
      read_new(recording);
    } catch (const std::exception& e) {
      warnings->push_back(name + " left out from now on: " + e.what());
      recording.damaged = true;
      continue;
    }
    // The image that runs now carries its live set on, whether it sampled or not.
    bool running = last || still_recording(recording.fd);
    for (size_t i = 0; i < recording.images.size(); i++) {
      ChunkWindow& window = recording.images[i];
      if (window.grew() || (running && i + 1 == recording.images.size())) 
        window.cut(start_nanos, end_nanos, last ? INT64_MAX : end_nanos, out);
    }
  }
  return out;
}

}  // namespace nmprof::cli
