// The two encodings of ints in HotSpot's debug information streams.
#include <gtest/gtest.h>

#include <vector>

#include "agent/java/hotspot/debug_info.h"

namespace nmprof::hotspot {
namespace {

struct Decoded {
  size_t used;
  uint32_t value;
};

Decoded decode(std::vector<uint8_t> bytes, bool exclude_zero) {
  uint32_t value = 0xdeadbeef;
  size_t used = decode_debug_int(bytes.data(), bytes.size(), exclude_zero, &value);
  return {used, used ? value : 0};
}

TEST(DecodeDebugInt, BeforeJdk20) {
  // Pack200 UNSIGNED5: bytes below 192 end a number; the others add 6 bits each.
  EXPECT_EQ(decode({0}, false).value, 0u);
  EXPECT_EQ(decode({191, 7}, false).value, 191u);
  EXPECT_EQ(decode({191}, false).used, 1u);
  Decoded two = decode({192, 0}, false);  // 192 + 0 * 64
  EXPECT_EQ(two.used, 2u);
  EXPECT_EQ(two.value, 192u);
  EXPECT_EQ(decode({200, 3}, false).value, 200u + 3 * 64);
  EXPECT_EQ(decode({255, 255, 5}, false).value, 255u + 255 * 64 + 5 * 64 * 64);
  Decoded five = decode({255, 255, 255, 255, 255, 9}, false);  // the 5th byte ends it whatever it is
  EXPECT_EQ(five.used, 5u);
}

TEST(DecodeDebugInt, SinceJdk20) {
  // The same, with every byte one higher: a 0 byte never occurs.
  EXPECT_EQ(decode({1}, true).value, 0u);
  EXPECT_EQ(decode({6}, true).value, 5u);
  EXPECT_EQ(decode({191}, true).value, 190u);
  Decoded two = decode({192, 1}, true);  // (192 - 1) + (1 - 1) * 64
  EXPECT_EQ(two.used, 2u);
  EXPECT_EQ(two.value, 191u);
  EXPECT_EQ(decode({200, 4}, true).value, 199u + 3 * 64);
  EXPECT_EQ(decode({0}, true).used, 0u);       // excluded byte
  EXPECT_EQ(decode({192, 0}, true).used, 0u);  // excluded byte later on
}

TEST(DecodeDebugInt, StopsAtTheEndOfTheBytes) {
  EXPECT_EQ(decode({}, false).used, 0u);
  EXPECT_EQ(decode({192}, false).used, 0u);
  EXPECT_EQ(decode({255, 255, 255}, true).used, 0u);
}

}  // namespace
}  // namespace nmprof::hotspot
