// UTF-8 encoding and decoding: for the Rust demanglers, which turn escapes,
// punycode and string constants back into characters, and for the JFR reader,
// which turns UTF-16 and Latin-1 strings into UTF-8 and makes every string of a
// recording safe to print (escape_controls).
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

// Text from somewhere untrusted (a recorded program's names, a target's messages)
// made safe for a terminal and for line formats: control characters (C0, newline and
// tab included, DEL, C1) and bytes that are not well-formed UTF-8 become \xHH (each
// byte of a C1 character too), so no escape sequence reaches a terminal and no line
// or field can be forged. Everything else, backslashes included, is kept.
std::string escape_controls(std::string_view text);

}  // namespace nmprof::text
