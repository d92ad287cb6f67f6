#include "formats/mangling/punycode.h"

#include <cstdint>

#include "formats/text/utf8.h"

namespace nmprof::symbols {

using text::is_scalar_value;
using text::append_utf8;

namespace {

// RFC 3492 section 5.
constexpr uint64_t kBase = 36, kTMin = 1, kTMax = 26, kSkew = 38, kDamp = 700, kInitialBias = 72,
                   kInitialN = 0x80;
constexpr size_t kMaxLength = 1024;  // longer names are not identifiers worth decoding

uint64_t adapt(uint64_t delta, uint64_t points, bool first) {
  delta /= first ? kDamp : 2;
  delta += delta / points;
  uint64_t k = 0;
  while (delta > ((kBase - kTMin) * kTMax) / 2) {
    delta /= kBase - kTMin;
    k += kBase;
  }
  return k + (kBase - kTMin + 1) * delta / (delta + kSkew);
}

// Rust's punycode digits: a-z are 0-25, 0-9 are 26-35.
std::optional<uint64_t> digit_value(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= '0' && c <= '9') return c - '0' + 26;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> decode_punycode(std::string_view basic, std::string_view encoded) {
  std::u32string output(basic.begin(), basic.end());
  uint64_t n = kInitialN, i = 0, bias = kInitialBias;
  for (size_t pos = 0; pos < encoded.size();) {
    uint64_t old_i = i, weight = 1;
    for (uint64_t k = kBase;; k += kBase) {
      if (pos == encoded.size()) return std::nullopt;
      auto digit = digit_value(encoded[pos++]);
      if (!digit || *digit > (UINT32_MAX - i) / weight) return std::nullopt;
      i += *digit * weight;
      uint64_t t = k <= bias ? kTMin : k >= bias + kTMax ? kTMax : k - bias;
      if (*digit < t) break;
      weight *= kBase - t;
      if (weight > UINT32_MAX) return std::nullopt;
    }
    uint64_t points = output.size() + 1;
    bias = adapt(i - old_i, points, old_i == 0);
    n += i / points;
    i %= points;
    if (n > 0x10FFFF || !is_scalar_value(static_cast<char32_t>(n)) || output.size() >= kMaxLength) {
      return std::nullopt;
    }
    output.insert(output.begin() + static_cast<ptrdiff_t>(i), static_cast<char32_t>(n));
    ++i;
  }
  std::string utf8;
  for (char32_t c : output) append_utf8(utf8, c);
  return utf8;
}

}  // namespace nmprof::symbols
