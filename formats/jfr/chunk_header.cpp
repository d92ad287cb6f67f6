#include "formats/jfr/chunk_header.h"

#include <algorithm>
#include <string>

#include "formats/jfr/byte_reader.h"
#include "formats/jfr/chunk_writer.h"

namespace nmprof::jfr {

int64_t ChunkHeader::ticks_to_nanos(int64_t ticks) const {
  // Producers use a 1 GHz clock almost always; a header without a frequency is taken as one.
  double per_second = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 1e9;
  double since_start = (static_cast<double>(ticks) - static_cast<double>(start_ticks)) * 1e9 / per_second;
  double nanos = std::clamp(static_cast<double>(start_nanos) + since_start, 0.0, static_cast<double>(kMaxTimeNanos));
  return static_cast<int64_t>(nanos);
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
