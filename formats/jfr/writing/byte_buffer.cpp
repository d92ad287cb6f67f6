#include "formats/jfr/writing/byte_buffer.h"

#include <sys/mman.h>

#include <cstring>
#include <utility>

namespace nmprof::jfr {

ByteBuffer::~ByteBuffer() {
  if (data_) munmap(data_, capacity_);
}

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      ok_(std::exchange(other.ok_, true)) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, capacity_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    ok_ = std::exchange(other.ok_, true);
  }
  return *this;
}

bool ByteBuffer::grow(size_t needed) {
  size_t capacity = capacity_ ? capacity_ : 4096;
  while (capacity < needed) {
    if (capacity > SIZE_MAX / 2) return ok_ = false;
    capacity *= 2;
  }
  // A new mapping and a copy, not mremap: ThreadSanitizer does not follow memory that
  // mremap moves, and takes the next thread to map those addresses for a racing one.
  void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    ok_ = false;
    return false;
  }
  if (data_) {
    memcpy(p, data_, size_);
    munmap(data_, capacity_);
  }
  data_ = static_cast<uint8_t*>(p);
  capacity_ = capacity;
  return true;
}

void ByteBuffer::put_bytes(const void* p, size_t n) {
  if (n && reserve(n)) {
    memcpy(data_ + size_, p, n);
    size_ += n;
  }
}

size_t ByteBuffer::put_varint_placeholder(size_t length) {
  size_t offset = size_;
  if (reserve(length)) {
    encode_varint_padded(0, data_ + size_, length);
    size_ += length;
  }
  return offset;
}

void ByteBuffer::put_be16(uint16_t v) {
  uint8_t b[2] = {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  put_bytes(b, 2);
}

void ByteBuffer::put_be32(uint32_t v) {
  put_be16(static_cast<uint16_t>(v >> 16));
  put_be16(static_cast<uint16_t>(v));
}

void ByteBuffer::put_be64(uint64_t v) {
  put_be32(static_cast<uint32_t>(v >> 32));
  put_be32(static_cast<uint32_t>(v));
}

void ByteBuffer::put_float(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_be32(bits);
}

void ByteBuffer::put_string(std::string_view s) {
  if (s.empty()) {
    put_u8(1);
    return;
  }
  put_u8(3);
  put_varint(s.size());
  put_bytes(s.data(), s.size());
}

void ByteBuffer::patch_be64(size_t offset, uint64_t v) {
  if (offset + 8 > size_) return;
  for (int i = 7; i >= 0; i--, v >>= 8) data_[offset + i] = static_cast<uint8_t>(v);
}

}  // namespace nmprof::jfr
