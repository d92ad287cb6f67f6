// Writes one JFR chunk to a file incrementally. After every append() the file is a
// complete, valid recording (the header is patched to cover everything written), so
// a process that dies between appends loses only what it had not appended yet. A
// write that fails (a full disk) is cut off again: the file stays the recording of
// the appends before it, and a smaller append may still follow. An append that
// would take the file past its cap writes only the whole events that fit. Appending
// allocates nothing (the pools are written as they are), and pools or events that
// failed to grow are not written at all.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/writing/constant_pools.h"
#include "formats/jfr/metadata.h"

namespace nmprof::jfr {

constexpr size_t kChunkHeaderSize = 68;

struct ChunkClock {
  uint64_t start_nanos;       // wall clock, ns since the Unix epoch
  uint64_t start_ticks;       // tick counter at the same instant
  uint64_t ticks_per_second;  // 1e9 for CLOCK_MONOTONIC in ns
};

class ChunkWriter {
 public:
  // Starts a chunk at the current end of fd with a header and the metadata record
  // (encoded by Metadata::encode, so that beginning needs no heap allocation).
  bool begin(int fd, const ByteBuffer& metadata_record, const ChunkClock& clock);
  // The same, encoding `metadata` first (for writers outside the agent).
  bool begin(int fd, const Metadata& metadata, const ChunkClock& clock);
  // Continues on `fd`, a descriptor of the same file (its number may change between
  // appends). After a write that failed and could not be cut off (its descriptor was
  // gone), what the header does not cover is cut off now; false when that fails.
  bool resume(int fd);
  // The file offset no begin() or append() may write past: they return false with
  // errno EFBIG instead; begin() writes nothing then, append() the pools and the
  // events that fit (nothing if the pools do not).
  void cap_file_size(uint64_t end) { cap_ = end; }
  uint64_t file_end() const { return chunk_start_ + size_; }
  // Writes a checkpoint with `pools` (when not empty) followed by `events` (encoded
  // records), then patches the header. now_ticks sets the chunk's duration. False with
  // errno ENOMEM, having written nothing, when `pools` or `events` is not ok().
  bool append(const ConstantPools& pools, const ByteBuffer& events, uint64_t now_ticks);
  bool ok() const { return ok_; }
  uint64_t bytes_written() const { return size_; }

 private:
  bool fits(uint64_t bytes) const;
  bool write_all(const void* p, size_t n);
  bool write_pieces(const ConstantPools& pools, uint64_t now_ticks, int64_t delta);
  bool patch_header(uint64_t now_ticks);
  bool cut_back();

  int fd_ = -1;
  bool ok_ = false;
  uint64_t chunk_start_ = 0;  // file offset of the chunk
  uint64_t size_ = 0;         // bytes of the chunk written so far
  uint64_t committed_ = 0;    // of which the header covers (0: no header yet)
  uint64_t metadata_offset_ = 0;
  uint64_t last_checkpoint_ = 0;  // offset within the chunk, 0 = none yet
  uint64_t committed_checkpoint_ = 0;  // the one the header names
  uint64_t cap_ = UINT64_MAX;
  ChunkClock clock_{};
};

}  // namespace nmprof::jfr
