// The fixed 68-byte header at the start of every chunk (jfr-format.md section 2).
#pragma once

#include <cstdint>
#include <span>

namespace nmprof::jfr {

// Times are kept in [0, kMaxTimeNanos] (until the year 2116), so that differences and
// sums of times from damaged or hostile files never overflow.
constexpr int64_t kMaxTimeNanos = INT64_MAX / 2;

struct ChunkHeader {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint64_t size = 0;  // as declared; a chunk cut short or still being written may differ
  uint64_t constant_pool_offset = 0;
  uint64_t metadata_offset = 0;
  int64_t start_nanos = 0;  // wall clock, ns since the Unix epoch; clamped to [0, kMaxTimeNanos]
  int64_t duration_nanos = 0;  // clamped so that start + duration <= kMaxTimeNanos
  int64_t start_ticks = 0;
  int64_t ticks_per_second = 0;
  uint8_t file_state = 0;  // 0 once the writer has finished the chunk
  uint16_t flags = 0;

  // Wall-clock time of a tick value of this chunk, ns since the Unix epoch, clamped
  // to [0, kMaxTimeNanos].
  int64_t ticks_to_nanos(int64_t ticks) const;
};

// True if bytes start with the chunk magic "FLR\0".
bool has_chunk_magic(std::span<const uint8_t> bytes);
// Parses the header at the start of bytes. Throws FormatError for a missing magic,
// an unsupported major version or fewer than 68 bytes.
ChunkHeader parse_chunk_header(std::span<const uint8_t> bytes);

}  // namespace nmprof::jfr
