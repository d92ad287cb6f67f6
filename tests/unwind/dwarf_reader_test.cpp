#include "agent/unwind/dwarf_reader.h"

#include <gtest/gtest.h>

#include <vector>

using namespace nmprof::unwind;

namespace {
DwarfReader reader_over(const std::vector<uint8_t>& bytes) { return DwarfReader(bytes.data(), bytes.data() + bytes.size()); }
}  // namespace

TEST(DwarfReader, Leb128) {
  std::vector<uint8_t> bytes = {0xe5, 0x8e, 0x26, 0xc0, 0xbb, 0x78, 0x7f, 0x3f,
                                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  DwarfReader reader = reader_over(bytes);
  EXPECT_EQ(reader.uleb128(), 624485u);
  EXPECT_EQ(reader.sleb128(), -123456);
  EXPECT_EQ(reader.sleb128(), -1);
  EXPECT_EQ(reader.sleb128(), 63);
  EXPECT_EQ(reader.uleb128(), UINT64_MAX);
  EXPECT_TRUE(reader.ok());
  EXPECT_TRUE(reader.at_end());
}

TEST(DwarfReader, OverlongLeb128Fails) {
  std::vector<uint8_t> bytes(11, 0x80);
  bytes.push_back(0x01);
  DwarfReader reader = reader_over(bytes);
  EXPECT_EQ(reader.uleb128(), 0u);
  EXPECT_FALSE(reader.ok());
}

TEST(DwarfReader, ReadsPastTheEndFailAndStayFailed) {
  std::vector<uint8_t> bytes = {1, 2, 3};
  DwarfReader reader = reader_over(bytes);
  EXPECT_EQ(reader.u16(), 0x0201);
  EXPECT_EQ(reader.u32(), 0u);
  EXPECT_FALSE(reader.ok());
  EXPECT_EQ(reader.u8(), 0u);  // even though one byte was left
  std::vector<uint8_t> unterminated = {0x80, 0x80};
  DwarfReader truncated_leb = reader_over(unterminated);
  truncated_leb.uleb128();
  EXPECT_FALSE(truncated_leb.ok());
  DwarfReader part = reader_over(bytes).take(4);
  EXPECT_FALSE(part.ok());
}

TEST(DwarfReader, EncodedPointers) {
  std::vector<uint8_t> bytes(32);
  auto at = [&](size_t offset) { return reinterpret_cast<uintptr_t>(bytes.data() + offset); };
  DwarfReader reader = reader_over(bytes);

  int32_t minus_16 = -16;
  std::memcpy(&bytes[0], &minus_16, 4);
  EXPECT_EQ(reader.encoded_pointer(eh_pe::kPcrel | eh_pe::kSdata4), at(0) - 16);

  bytes[4] = 0x34, bytes[5] = 0x12;
  EXPECT_EQ(reader.encoded_pointer(eh_pe::kUdata2), 0x1234u);

  bytes[6] = 0x10;
  EXPECT_EQ(reader.encoded_pointer(eh_pe::kDatarel | eh_pe::kUleb128, 0x1000), 0x1010u);

  bytes[7] = 0x7f;  // sleb -1
  EXPECT_EQ(reader.encoded_pointer(eh_pe::kPcrel | eh_pe::kSleb128), at(7) - 1);

  // Aligned: skips to the next 8-byte boundary, then an absolute pointer.
  size_t aligned = (8 - at(8) % 8) % 8 + 8;
  uint64_t target = 0x1122334455667788;
  std::memcpy(&bytes[aligned], &target, 8);
  EXPECT_EQ(reader.encoded_pointer(eh_pe::kAligned), target);
  EXPECT_TRUE(reader.ok());
}

TEST(DwarfReader, EncodingsWithoutABaseFail) {
  std::vector<uint8_t> bytes(16);
  for (uint8_t encoding : {uint8_t(eh_pe::kTextrel | eh_pe::kUdata4), uint8_t(eh_pe::kFuncrel | eh_pe::kUdata4),
                           uint8_t(eh_pe::kDatarel | eh_pe::kUdata4), uint8_t(0x05), eh_pe::kOmit}) {
    DwarfReader reader = reader_over(bytes);
    reader.encoded_pointer(encoding);
    EXPECT_FALSE(reader.ok()) << int(encoding);
  }
}
