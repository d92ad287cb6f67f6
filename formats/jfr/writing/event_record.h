// Encodes one event record (size, type id, fields). A record's size counts its own
// size field, so the fields are collected first and the size written in front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/varint.h"

namespace nmprof::jfr {

// Appends `body` (type id and fields) to `out` as one record, whole or not at all
// (false: `out` could not grow).
inline bool append_record(ByteBuffer& out, const uint8_t* body, size_t length) {
  size_t size_length = 1;
  while (length + size_length >= (uint64_t{1} << (7 * size_length))) size_length++;
  if (!out.reserve(kMaxVarintLength + length)) return false;  // what put_varint asks for
  out.put_varint(length + size_length);
  out.put_bytes(body, length);
  return true;
}

// A record of fixed-width fields built on the stack: no heap use on the sampled path.
class SmallRecord {
 public:
  explicit SmallRecord(uint64_t type) { varint(type); }
  void varint(uint64_t v) { length_ += encode_varint(v, bytes_ + length_); }
  void u8(uint8_t v) { bytes_[length_++] = v; }
  void f32(float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int shift = 24; shift >= 0; shift -= 8) bytes_[length_++] = static_cast<uint8_t>(bits >> shift);
  }
  bool append_to(ByteBuffer& out) const { return append_record(out, bytes_, length_); }

 private:
  // Room for 20 varints, a float and 8 bytes: more than any small event has (a
  // profiler.Malloc with 8 context attributes needs 16 varints, 8 bytes and a float).
  uint8_t bytes_[20 * kMaxVarintLength + 12];
  size_t length_ = 0;
};

}  // namespace nmprof::jfr
