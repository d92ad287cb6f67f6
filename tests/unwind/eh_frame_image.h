// Writes .eh_frame_hdr and .eh_frame into one buffer the way a linker lays them out,
// for builder tests on data no compiler emits. Encoded pointers are computed from
// where they land, so pc-relative forms work as in a loaded module.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "agent/unwind/dwarf_constants.h"
#include "agent/unwind/frame_table_builder.h"

namespace nmprof::unwind::test {

class EhFrameImage {
 public:
  static constexpr size_t kHeaderBytes = 512;
  static constexpr uint8_t kPcrelSdata4 = eh_pe::kPcrel | eh_pe::kSdata4;

  struct Cie {
    uint8_t version = 1;
    std::string augmentation = "zR";
    uint8_t fde_encoding = kPcrelSdata4;
    uint8_t personality_encoding = eh_pe::kIndirect | kPcrelSdata4;
    uint64_t code_alignment = 1;
    uint64_t return_address_register = 16;
    // CFA = rsp + 8, return address at CFA - 8: what gcc's CIEs say.
    std::vector<uint8_t> instructions = {cfa_op::kDefCfa, 7, 8, cfa_op::kOffset | 16, 1};
    bool extended_length = false;
  };

  EhFrameImage() : bytes_(64 * 1024) {}

  // Where the described "code" is: near the records, so that even 16-bit pc-relative
  // forms reach it (it is never read).
  uintptr_t code(uint64_t offset) const { return base() + 16 * 1024 + offset; }
  uintptr_t load_bias() const { return base() & ~uintptr_t{0xfff}; }
  uintptr_t base() const { return reinterpret_cast<uintptr_t>(bytes_.data()); }

  // Returns the CIE's offset, for add_fde.
  size_t add_cie(const Cie& cie) {
    size_t start = begin_entry(cie.extended_length);
    u32(0);
    u8(cie.version);
    for (char letter : cie.augmentation) u8(static_cast<uint8_t>(letter));
    u8(0);
    if (cie.version == 4) {
      u8(8);  // address size
      u8(0);  // segment selector size
    }
    uleb(cie.code_alignment);
    sleb(-8);
    if (cie.version == 1) {
      u8(static_cast<uint8_t>(cie.return_address_register));
    } else {
      uleb(cie.return_address_register);
    }
    if (!cie.augmentation.empty() && cie.augmentation[0] == 'z') {
      size_t length_at = pos_;
      u8(0);  // patched below; the tests' augmentation data stays under 128 bytes
      size_t data_start = pos_;
      for (char letter : cie.augmentation.substr(1)) {
        if (letter == 'R') u8(cie.fde_encoding);
        if (letter == 'L') u8(kPcrelSdata4);
        if (letter == 'P') {
          u8(cie.personality_encoding);
          encoded(cie.personality_encoding, code(0x8000));
        }
      }
      bytes_[length_at] = static_cast<uint8_t>(pos_ - data_start);
    }
    raw(cie.instructions);
    end_entry(start, cie.extended_length);
    cies_.push_back({start, cie});
    return start;
  }

  // Returns the FDE's address. `listed`: whether the header's search table names it.
  uintptr_t add_fde(size_t cie_offset, uint64_t pc_begin, uint64_t length, const std::vector<uint8_t>& instructions,
                    bool extended_length = false, bool listed = true) {
    const Cie& cie = cie_at(cie_offset);
    size_t start = begin_entry(extended_length);
    u32(static_cast<uint32_t>(pos_ - cie_offset));
    encoded(cie.fde_encoding, pc_begin);
    encoded(cie.fde_encoding & eh_pe::kFormatMask, length);
    if (cie.augmentation.starts_with('z')) {
      bool lsda = cie.augmentation.find('L') != std::string::npos;
      uleb(lsda ? 4 : 0);
      if (lsda) encoded(kPcrelSdata4, code(0x9000));
    }
    raw(instructions);
    end_entry(start, extended_length);
    if (listed) table_.push_back({pc_begin, base() + start});
    return base() + start;
  }

  // The search table entry for an FDE, if a test wants it to lie.
  std::vector<std::pair<uint64_t, uint64_t>>& table() { return table_; }
  void set_header_version(uint8_t version) { header_version_ = version; }
  void set_count_encoding(uint8_t encoding) { count_encoding_ = encoding; }
  void set_listed_count(uint32_t count) { listed_count_ = count; }

  FrameTableBuild build() {
    size_t end = pos_;
    u32(0);  // terminator
    write_header();
    MemoryRange header{base(), base() + 4 + 4 + 4 + 8 * table_.size()};
    MemoryRange readable{base(), base() + end + 4};
    pos_ = end;
    return build_frame_table(header, std::span(&readable, 1), load_bias());
  }

  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  const Cie& cie_at(size_t offset) const {
    for (const auto& [start, cie] : cies_) {
      if (start == offset) return cie;
    }
    return cies_.front().second;
  }

  // Returns the entry's offset: where its length field starts.
  size_t begin_entry(bool extended_length) {
    size_t start = pos_;
    u32(extended_length ? 0xffffffff : 0);
    if (extended_length) u64(0);
    return start;
  }

  void end_entry(size_t start, bool extended_length) {
    if (extended_length) {
      uint64_t length = pos_ - (start + 12);
      std::memcpy(&bytes_[start + 4], &length, 8);
    } else {
      auto length = static_cast<uint32_t>(pos_ - (start + 4));
      std::memcpy(&bytes_[start], &length, 4);
    }
  }

  void write_header() {
    size_t saved = pos_;
    pos_ = 0;
    u8(header_version_);
    u8(kPcrelSdata4);  // eh_frame_ptr
    u8(count_encoding_);
    u8(eh_pe::kDatarel | eh_pe::kSdata4);  // the table
    encoded(kPcrelSdata4, base() + kHeaderBytes);
    u32(listed_count_ ? listed_count_ : static_cast<uint32_t>(table_.size()));
    for (auto [pc, fde] : table_) {
      u32(static_cast<uint32_t>(pc - base()));
      u32(static_cast<uint32_t>(fde - base()));
    }
    pos_ = saved;
  }

  void encoded(uint8_t encoding, uint64_t value) {
    if ((encoding & eh_pe::kApplicationMask) == eh_pe::kAligned) {
      while ((base() + pos_) % 8) u8(0);
      return u64(value);
    }
    if ((encoding & eh_pe::kApplicationMask) == eh_pe::kPcrel) value -= base() + pos_;
    switch (encoding & eh_pe::kFormatMask) {
      case eh_pe::kUleb128: return uleb(value);
      case eh_pe::kSleb128: return sleb(static_cast<int64_t>(value));
      case eh_pe::kUdata2: case eh_pe::kSdata2: return u16(static_cast<uint16_t>(value));
      case eh_pe::kUdata4: case eh_pe::kSdata4: return u32(static_cast<uint32_t>(value));
      default: return u64(value);
    }
  }

  void raw(const std::vector<uint8_t>& data) {
    for (uint8_t byte : data) u8(byte);
  }
  void u8(uint8_t value) { bytes_[pos_++] = value; }
  void u16(uint16_t value) { std::memcpy(&bytes_[pos_], &value, 2), pos_ += 2; }
  void u32(uint32_t value) { std::memcpy(&bytes_[pos_], &value, 4), pos_ += 4; }
  void u64(uint64_t value) { std::memcpy(&bytes_[pos_], &value, 8), pos_ += 8; }
  void uleb(uint64_t value) {
    do {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      u8(value ? byte | 0x80 : byte);
    } while (value);
  }
  void sleb(int64_t value) {
    for (;;) {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
      u8(done ? byte : byte | 0x80);
      if (done) return;
    }
  }

  std::vector<uint8_t> bytes_;
  size_t pos_ = kHeaderBytes;
  std::vector<std::pair<size_t, Cie>> cies_;
  std::vector<std::pair<uint64_t, uint64_t>> table_;  // (pc, FDE address)
  uint8_t header_version_ = 1;
  uint8_t count_encoding_ = eh_pe::kUdata4;
  uint32_t listed_count_ = 0;
};

}  // namespace nmprof::unwind::test
