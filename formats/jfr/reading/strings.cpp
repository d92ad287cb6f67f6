#include "formats/jfr/reading/strings.h"

#include "formats/text/utf8.h"

namespace nmprof::jfr {
namespace {

enum Encoding : uint8_t { kNull = 0, kEmpty = 1, kPoolKey = 2, kUtf8 = 3, kUtf16 = 4, kLatin1 = 5 };

using text::append_utf8;

uint64_t length(ByteReader& in) {
  uint64_t n = in.varint();
  // Every unit takes at least one byte, so a longer length is corrupt, not just big.
  if (n > in.remaining()) throw FormatError("string length " + std::to_string(n) + " exceeds its record");
  return n;
}

void read_utf16(ByteReader& in, std::string& out) {
  uint64_t n = length(in);
  for (uint64_t i = 0; i < n; i++) {
    uint32_t unit = static_cast<uint16_t>(in.varint());
    if (unit >= 0xD800 && unit < 0xDC00 && i + 1 < n) {
      size_t back = in.position();
      uint32_t low = static_cast<uint16_t>(in.varint());
      if (low >= 0xDC00 && low < 0xE000) {
        append_utf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
        i++;
        continue;
      }
      in.seek(back);
    }
    append_utf8(out, unit >= 0xD800 && unit < 0xE000 ? 0xFFFD : unit);  // lone surrogate
  }
}

}  // namespace

StringKind read_string(ByteReader& in, std::string& out, uint64_t& key) {
  out.clear();
  uint8_t encoding = in.u8();
  switch (encoding) {
    case kNull: return StringKind::Null;
    case kEmpty: return StringKind::Text;
    case kPoolKey: key = in.varint(); return StringKind::PoolKey;
    case kUtf8: {
      auto bytes = in.bytes(length(in));
      out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      break;
    }
    case kUtf16: read_utf16(in, out); break;
    case kLatin1:
      for (uint8_t b : in.bytes(length(in))) append_utf8(out, b);
      break;
    default: throw FormatError("unknown string encoding " + std::to_string(encoding));
  }
  // Every string of a recording comes from the recorded program (names, paths, its
  // command line, context values): made safe to print here, once, for every report.
  out = text::escape_controls(out);
  return StringKind::Text;
}

void skip_string(ByteReader& in) {
  uint8_t encoding = in.u8();
  switch (encoding) {
    case kNull:
    case kEmpty: return;
    case kPoolKey: in.varint(); return;
    case kUtf8:
    case kLatin1: in.skip(length(in)); return;
    case kUtf16:
      for (uint64_t n = length(in); n > 0; n--) in.varint();
      return;
  }
  throw FormatError("unknown string encoding " + std::to_string(encoding));
}

}  // namespace nmprof::jfr
