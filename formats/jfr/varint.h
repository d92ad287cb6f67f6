// JFR's compressed integers: LEB128-like, least significant group first, at most
// 9 bytes (the 9th byte carries bits 56..63 whole). See jfr-format.md section 3.1.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmprof::jfr {

constexpr size_t kMaxVarintLength = 9;

// Writes v at out (room for kMaxVarintLength bytes); returns the bytes written.
inline size_t encode_varint(uint64_t v, uint8_t* out) {
  for (size_t i = 0; i < 8; i++) {
    if (v < 0x80) {
      out[i] = static_cast<uint8_t>(v);
      return i + 1;
    }
    out[i] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[8] = static_cast<uint8_t>(v);
  return 9;
}

// Writes v in exactly `length` bytes (a non-canonical but legal encoding), so that a
// size written before its record is known can be patched in place. v must fit in
// 7*length bits.
inline void encode_varint_padded(uint64_t v, uint8_t* out, size_t length) {
  for (size_t i = 0; i + 1 < length; i++) {
    out[i] = static_cast<uint8_t>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out[length - 1] = static_cast<uint8_t>(v & 0x7f);
}

// Reads a varint from [p, end). Returns the bytes consumed, 0 if the input ends first.
inline size_t decode_varint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (size_t i = 0; i < 8; i++) {
    if (p + i >= end) return 0;
    uint8_t b = p[i];
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (b < 0x80) return i + 1;
  }
  if (p + 8 >= end) return 0;
  v |= static_cast<uint64_t>(p[8]) << 56;
  return 9;
}

}  // namespace nmprof::jfr
