// HotSpot's attach protocol, version 1 (every HotSpot since JDK 6): the bytes of a
// request and how to read the reply, including the `load` reply's JDK variants.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "attach/result.h"

namespace nmprof::attach {

// Longer strings make the JVM close the connection without a reply.
constexpr size_t kMaxCommandBytes = 16;
constexpr size_t kMaxArgumentBytes = 1024;

// Exactly three: the JVM drops requests with fewer; missing ones are empty strings.
using Arguments = std::array<std::string_view, 3>;

// "1\0<command>\0<arg0>\0<arg1>\0<arg2>\0". Errors: a string too long or containing NUL.
Result<std::string> encode_request(std::string_view command, const Arguments& args);

struct Reply {
  int code = 0;      // first line: 0 = done, -1 = failed, 101 = protocol version not supported
  std::string text;  // everything after the first line
};

// nullopt unless the bytes start with a decimal number on its own line.
std::optional<Reply> parse_reply(std::string_view bytes);

// The outcome of `load`. The library was loaded and Agent_OnAttach called if the code
// is 0 and the second line is "return code: <n>" (JDK 9+) or a bare number (JDK 8).
// Otherwise the text is the JVM's reason; JDK 21+ reports such failures with code 0.
struct LoadReply {
  std::optional<int> agent_code;  // Agent_OnAttach's result; non-zero: the JVM unloaded it
  std::string reason;             // why the library was not loaded, when agent_code is empty
};
LoadReply parse_load_reply(const Reply& reply);

// The JVM's text on a single line (for one-line error messages).
std::string one_line(std::string_view text);

}  // namespace nmprof::attach
