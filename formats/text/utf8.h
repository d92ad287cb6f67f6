// UTF-8 encoding and decoding: for the Rust demanglers, which turn escapes,
// punycode and string constants back into characters, and for the JFR reader,
// which turns UTF-16 and Latin-1 strings into UTF-8.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nmprof::text {

// True for a Unicode scalar value (at most U+10FFFF, not a surrogate).
bool is_scalar_value(char32_t c);
// True for the C0 and C1 control characters (Unicode category Cc).
bool is_control(char32_t c);
// Appends a scalar value, which the caller has checked, as UTF-8.
void append_utf8(std::string& out, char32_t c);
// Decodes well-formed UTF-8 (no overlong forms or surrogates), or nothing.
std::optional<std::u32string> decode_utf8(std::string_view bytes);

}  // namespace nmprof::text
