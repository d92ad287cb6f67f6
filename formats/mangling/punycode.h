// Punycode (RFC 3492) decoding for Rust v0 identifiers, which spell non-ASCII
// names as their ASCII characters, '_', and the encoded rest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nmprof::symbols {

// The UTF-8 name whose basic (ASCII) characters are `basic` and whose other
// characters `encoded` inserts, or nothing if `encoded` is not valid punycode.
std::optional<std::string> decode_punycode(std::string_view basic, std::string_view encoded);

}  // namespace nmprof::symbols
