// The hand-written profile.proto encoding, byte for byte against the walk-through in
// shared/specs/pprof-format.md (verified there with go tool pprof), and the gzip wrapping.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "formats/pprof/gzip.h"
#include "formats/pprof/pprof_profile.h"
#include "formats/pprof/protobuf.h"

namespace nmprof::pprof {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

std::string string_field(const std::string& s) { return bytes({0x32, static_cast<int>(s.size())}) + s; }

TEST(ProtoMessage, VarintsTakeSevenBitsPerByte) {
  ProtoMessage m;
  m.varint_field(1, 300);
  m.signed_field(2, -1);  // int64: ten bytes of two's complement
  m.varint_field(3, 0);   // proto3 default: left out
  EXPECT_EQ(m.bytes(), bytes({0x08, 0xac, 0x02, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(ProtoMessage, PackedValuesKeepZeros) {
  ProtoMessage m;
  int64_t values[] = {0, 0, 5};
  m.packed_field(2, values);
  EXPECT_EQ(m.bytes(), bytes({0x12, 0x03, 0x00, 0x00, 0x05}));
}

TEST(ProtoMessage, Fixed64IsEightBytesLittleEndian) {
  ProtoMessage m;
  m.fixed64_field(3, 0x0102030405060708);
  m.fixed64_field(4, 0);  // proto3 default: left out
  EXPECT_EQ(m.bytes(), bytes({0x19, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
}

TEST(ProtoMessage, ElementsOfRepeatedFieldsAreWrittenEvenWhenEmpty) {
  ProtoMessage empty, one;
  one.varint_field(1, 5);
  ProtoMessage m;
  m.element_field(2, empty);  // index 0 of an OTLP table: its position counts
  m.element_field(2, one);
  m.message_field(3, empty);  // a singular message at its default: left out
  EXPECT_EQ(m.bytes(), bytes({0x12, 0x00, 0x12, 0x02, 0x08, 0x05}));
}

TEST(StringTable, IndexesEachStringOnceWithTheEmptyStringFirst) {
  StringTable strings;
  EXPECT_EQ(strings.index("a"), 1);
  EXPECT_EQ(strings.index(""), 0);
  EXPECT_EQ(strings.index("b"), 2);
  EXPECT_EQ(strings.index("a"), 1);
  ProtoMessage m;
  strings.write(m, 5);
  EXPECT_EQ(m.bytes(), bytes({0x2a, 0x00, 0x2a, 0x01, 'a', 0x2a, 0x01, 'b'}));
}

TEST(Encode, MatchesTheSpecWalkThrough) {
  Profile p;
  p.sample_types = {{"alloc_objects", "count"}, {"alloc_space", "bytes"}};
  p.samples.push_back({{1, 2}, {1, 64}, {}});
  p.functions = {{"malloc", {}, {}, 0}, {"main", {}, {}, 0}};
  p.locations = {{0, 0, {{1, 0}}}, {0, 0, {{2, 0}}}};
  std::string expected = bytes({0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,                                //
                                0x0a, 0x04, 0x08, 0x03, 0x10, 0x04,                                //
                                0x12, 0x08, 0x0a, 0x02, 0x01, 0x02, 0x12, 0x02, 0x01, 0x40,        //
                                0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01,                    //
                                0x22, 0x06, 0x08, 0x02, 0x22, 0x02, 0x08, 0x02,                    //
                                0x2a, 0x04, 0x08, 0x01, 0x10, 0x05, 0x2a, 0x04, 0x08, 0x02, 0x10, 0x06,  //
                                0x32, 0x00}) +
                         string_field("alloc_objects") + string_field("count") + string_field("alloc_space") +
                         string_field("bytes") + string_field("malloc") + string_field("main");
  EXPECT_EQ(encode(p), expected);
}

TEST(Encode, LabelsAreStringOrNumeric) {
  Profile p;
  p.sample_types = {{"alloc_space", "bytes"}};
  p.samples.push_back({{}, {7}, {{"span", "checkout", 0, {}, false}, {"bytes", {}, 48, "bytes", true}}});
  std::string out = encode(p);
  // Strings: 1 "alloc_space", 2 "bytes", 3 "span", 4 "checkout". The sample: value 7,
  // label {key=3, str=4}, label {key=2, num=48, num_unit=2}.
  std::string sample = bytes({0x12, 0x11, 0x12, 0x01, 0x07, 0x1a, 0x04, 0x08, 0x03, 0x10, 0x04, 0x1a, 0x06, 0x08,
                              0x02, 0x18, 0x30, 0x20, 0x02});
  EXPECT_NE(out.find(sample), std::string::npos);
}

TEST(Gzip, InflatesBackToTheInput) {
  std::string input(100000, 'x');
  for (size_t i = 0; i < input.size(); i += 7) input[i] = static_cast<char>(i);
  std::string packed = gzip(input);
  ASSERT_GE(packed.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x8b);
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string back(input.size() + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(packed.data());
  z.avail_in = static_cast<uInt>(packed.size());
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  back.resize(z.total_out);
  inflateEnd(&z);
  EXPECT_EQ(back, input);
}

}  // namespace
}  // namespace nmprof::pprof
