// A bounds-checked cursor over JFR bytes. Every read past the end or of a malformed
// value throws FormatError, so decoding code can be written straight-line and a
// damaged record is abandoned as a whole (jfr-format.md sections 3 and 5).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "formats/jfr/varint.h"

namespace nmprof::jfr {

// A file that cannot be read as JFR, or a part of it that is damaged. what() is one
// line meant for the user.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, size_t position = 0) : bytes_(bytes), position_(position) {}

  size_t position() const { return position_; }
  size_t remaining() const { return position_ < bytes_.size() ? bytes_.size() - position_ : 0; }
  void seek(size_t position) { position_ = position; }

  uint64_t varint() {
    uint64_t v;
    size_t n =
        position_ < bytes_.size() ? decode_varint(bytes_.data() + position_, bytes_.data() + bytes_.size(), v) : 0;
    if (n == 0) throw FormatError("value runs past the end of its record");
    position_ += n;
    return v;
  }
  uint8_t u8() {
    need(1);
    return bytes_[position_++];
  }
  uint64_t be(size_t width) {
    need(width);
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++) v = (v << 8) | bytes_[position_ + i];
    position_ += width;
    return v;
  }
  float f32() {
    uint32_t bits = static_cast<uint32_t>(be(4));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  double f64() {
    uint64_t bits = be(8);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    need(n);
    auto s = bytes_.subspan(position_, static_cast<size_t>(n));
    position_ += static_cast<size_t>(n);
    return s;
  }
  void skip(uint64_t n) { bytes(n); }

 private:
  void need(uint64_t n) const {
    if (n > remaining()) throw FormatError("value runs past the end of its record");
  }

  std::span<const uint8_t> bytes_;
  size_t position_;
};

}  // namespace nmprof::jfr
