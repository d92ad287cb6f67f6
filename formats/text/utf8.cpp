#include "formats/text/utf8.h"

namespace nmprof::text {

bool is_scalar_value(char32_t c) { return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

bool is_control(char32_t c) { return c < 0x20 || (c >= 0x7F && c < 0xA0); }

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `bytes` (no overlong
// form or surrogate), with its character in *c; 0 when there is none.
size_t decode_one(std::string_view bytes, char32_t* c) {
  unsigned char lead = static_cast<unsigned char>(bytes[0]);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || bytes.size() < length) return 0;
  *c = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    unsigned char next = static_cast<unsigned char>(bytes[k]);
    if ((next >> 6) != 0x2) return 0;
    *c = (*c << 6) | (next & 0x3F);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  return *c < kSmallest[length] || !is_scalar_value(*c) ? 0 : length;
}

void append_escaped_byte(std::string& out, char byte) {
  static const char kHex[] = "0123456789abcdef";
  auto b = static_cast<unsigned char>(byte);
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xF];
}

}  // namespace

std::optional<std::u32string> decode_utf8(std::string_view bytes) {
  std::u32string chars;
  for (size_t i = 0; i < bytes.size();) {
    char32_t c = 0;
    size_t length = decode_one(bytes.substr(i), &c);
    if (length == 0) return std::nullopt;
    chars += c;
    i += length;
  }
  return chars;
}

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    size_t length = decode_one(text.substr(i), &c);
    if (length == 0) {
      append_escaped_byte(out, text[i++]);
      continue;
    }
    for (size_t k = 0; k < length; k++) {
      if (is_control(c))
        append_escaped_byte(out, text[i + k]);
      else
        out += text[i + k];
    }
    i += length;
  }
  return out;
}

}  // namespace nmprof::text
