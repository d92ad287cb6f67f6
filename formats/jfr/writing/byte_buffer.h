// A growable output buffer for JFR encoding. Its storage comes from mmap, not
// malloc, so the agent can finish a recording from a signal handler or while the
// host's allocator is busy on the same thread. A growth that fails (no address
// space left: ulimit -v) leaves the buffer failed: it takes nothing more until
// cleared, so what it holds is never a record cut in the middle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/jfr/varint.h"

namespace nmprof::jfr {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer();
  ByteBuffer(ByteBuffer&& other) noexcept;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  const uint8_t* data() const { return data_; }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Empty, and usable again after a failed growth (which kept the old storage).
  void clear() {
    size_ = 0;
    ok_ = true;
  }
  // False once a growth failed (out of memory); everything written since is dropped.
  bool ok() const { return ok_; }
  // Room for `extra` more bytes, made now: the writes that fit in it cannot fail.
  bool reserve(size_t extra) { return ok_ && (size_ + extra <= capacity_ || grow(size_ + extra)); }

  void put_u8(uint8_t b) {
    if (reserve(1)) data_[size_++] = b;
  }
  void put_bytes(const void* p, size_t n);
  void put_varint(uint64_t v) {
    if (reserve(kMaxVarintLength)) size_ += encode_varint(v, data_ + size_);
  }
  // A varint in exactly `length` bytes, to be patched later with patch_varint().
  size_t put_varint_placeholder(size_t length);
  void patch_varint(size_t offset, uint64_t v, size_t length) {
    if (offset + length <= size_) encode_varint_padded(v, data_ + offset, length);
  }
  void put_be16(uint16_t v);
  void put_be32(uint32_t v);
  void put_be64(uint64_t v);
  void put_float(float v);
  void put_bool(bool v) { put_u8(v ? 1 : 0); }
  // JFR string: empty -> encoding 1, otherwise UTF-8 (encoding 3).
  void put_string(std::string_view s);
  void put_null_string() { put_u8(0); }
  void patch_be64(size_t offset, uint64_t v);

 private:
  bool grow(size_t needed);

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool ok_ = true;
};

}  // namespace nmprof::jfr
