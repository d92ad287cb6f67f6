#include "formats/jfr/reading/chunk_header.h"

#include <algorithm>
#include <string>

#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof::jfr {

int64_t ChunkHeader::ticks_to_nanos(int64_t ticks) const {
  int64_t ticks_since_start, nanos;
  // Producers use a 1 GHz clock almost always: it needs no scaling, which would round
  // ticks far from the chunk's start (a chunk cut by run --loop, whose clock starts at
  // its window's start, holds events from long before).
  if (ticks_per_second == 1'000'000'000 && !__builtin_sub_overflow(ticks, start_ticks, &ticks_since_start) &&
      !__builtin_add_overflow(start_nanos, ticks_since_start, &nanos))
    return std::clamp(nanos, int64_t{0}, kMaxTimeNanos);
  // A header without a frequency is taken as 1 GHz.
  double per_second = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 1e9;
  // Exact for real values; hostile ones saturate instead of overflowing.
  double since_start = __builtin_sub_overflow(ticks, start_ticks, &ticks_since_start)
                           ? (ticks < 0 ? -1e300 : 1e300)
                           : static_cast<double>(ticks_since_start) * 1e9 / per_second;
  since_start = std::clamp(since_start, -static_cast<double>(start_nanos),
                           static_cast<double>(kMaxTimeNanos - start_nanos));
  return std::clamp(start_nanos + static_cast<int64_t>(since_start), int64_t{0}, kMaxTimeNanos);
}

bool has_chunk_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && bytes[0] == 'F' && bytes[1] == 'L' && bytes[2] == 'R' && bytes[3] == 0;
}

ChunkHeader parse_chunk_header(std::span<const uint8_t> bytes) {
  if (!has_chunk_magic(bytes)) throw FormatError("not a JFR file (no \"FLR\" magic)");
  if (bytes.size() < kChunkHeaderSize)
    throw FormatError("truncated file: chunk header has " + std::to_string(bytes.size()) + " of 68 bytes");
  ByteReader in(bytes, 4);
  ChunkHeader h;
  h.major = static_cast<uint16_t>(in.be(2));
  h.minor = static_cast<uint16_t>(in.be(2));
  if (h.major != 2)
    throw FormatError("unsupported JFR version " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                      " (nmprof reads version 2)");
  h.size = in.be(8);
  h.constant_pool_offset = in.be(8);
  h.metadata_offset = in.be(8);
  h.start_nanos = std::clamp(static_cast<int64_t>(in.be(8)), int64_t{0}, kMaxTimeNanos);
  h.duration_nanos = std::clamp(static_cast<int64_t>(in.be(8)), int64_t{0}, kMaxTimeNanos - h.start_nanos);
  h.start_ticks = static_cast<int64_t>(in.be(8));
  h.ticks_per_second = static_cast<int64_t>(in.be(8));
  h.file_state = in.u8();
  in.u8();  // padding
  h.flags = static_cast<uint16_t>(in.be(2));
  return h;
}

}  // namespace nmprof::jfr
