// A bounds-checked cursor over DWARF bytes of a loaded module. A read that would
// pass the end (or an unsupported encoding) puts the reader in a failed state and
// returns 0, so a parser can read a whole record and test ok() once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "agent/unwind/dwarf_constants.h"

namespace nmprof::unwind {

class DwarfReader {
 public:
  DwarfReader() = default;
  DwarfReader(const uint8_t* begin, const uint8_t* end) : pos_(begin), end_(end) {}

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == end_; }
  const uint8_t* position() const { return pos_; }
  const uint8_t* end() const { return end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  void fail() {
    ok_ = false;
    pos_ = end_;
  }

  uint8_t u8() { return fixed<uint8_t>(); }
  uint16_t u16() { return fixed<uint16_t>(); }
  uint32_t u32() { return fixed<uint32_t>(); }
  uint64_t u64() { return fixed<uint64_t>(); }

  uint64_t uleb128() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t byte = u8();
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    fail();  // longer than any 64-bit value
    return 0;
  }

  int64_t sleb128() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64;) {
      uint8_t byte = u8();
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(value);
      }
    }
    fail();
    return 0;
  }

  void skip(size_t count) {
    if (count > remaining()) return fail();
    pos_ += count;
  }

  // Splits off the next `count` bytes as a reader of their own.
  DwarfReader take(size_t count) {
    if (count > remaining()) {
      fail();
      return failed();
    }
    DwarfReader part(pos_, pos_ + count);
    pos_ += count;
    return part;
  }

  // Reads a DW_EH_PE-encoded pointer as a run-time address. `data_base` is what
  // DW_EH_PE_datarel is relative to (0: not allowed here). The indirect bit is not
  // followed: no caller dereferences such values, they only skip them.
  uint64_t encoded_pointer(uint8_t encoding, uint64_t data_base = 0) {
    uint64_t base = 0;
    switch (encoding & eh_pe::kApplicationMask) {
      case eh_pe::kAbsptr:
        break;
      case eh_pe::kPcrel:
        base = reinterpret_cast<uintptr_t>(pos_);
        break;
      case eh_pe::kDatarel:
        if (data_base == 0) {
          fail();
          return 0;
        }
        base = data_base;
        break;
      case eh_pe::kAligned: {
        size_t misalignment = reinterpret_cast<uintptr_t>(pos_) % 8;
        skip(misalignment ? 8 - misalignment : 0);
        return u64();
      }
      default:  // textrel and funcrel have no base on x86-64 Linux
        fail();
        return 0;
    }
    uint64_t value;
    switch (encoding & eh_pe::kFormatMask) {
      case eh_pe::kAbsptr: value = u64(); break;
      case eh_pe::kUleb128: value = uleb128(); break;
      case eh_pe::kUdata2: value = u16(); break;
      case eh_pe::kUdata4: value = u32(); break;
      case eh_pe::kUdata8: value = u64(); break;
      case eh_pe::kSleb128: value = static_cast<uint64_t>(sleb128()); break;
      case eh_pe::kSdata2: value = static_cast<uint64_t>(int64_t{static_cast<int16_t>(u16())}); break;
      case eh_pe::kSdata4: value = static_cast<uint64_t>(int64_t{static_cast<int32_t>(u32())}); break;
      case eh_pe::kSdata8: value = u64(); break;
      default:
        fail();
        return 0;
    }
    return ok_ ? base + value : 0;
  }

 private:
  static DwarfReader failed() {
    DwarfReader reader;
    reader.ok_ = false;
    return reader;
  }

  template <class T>
  T fixed() {
    if (remaining() < sizeof(T)) {
      fail();
      return 0;
    }
    T value;
    std::memcpy(&value, pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  bool ok_ = true;
};

}  // namespace nmprof::unwind
