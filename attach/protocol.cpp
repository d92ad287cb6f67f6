#include "attach/protocol.h"

#include <cctype>
#include <charconv>

namespace nmprof::attach {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

Result<void> check_string(std::string_view what, std::string_view value, size_t limit) {
  if (value.find('\0') != std::string_view::npos) {
    return Error{"the attach " + std::string(what) + " contains a NUL byte, which the protocol cannot carry"};
  }
  if (value.size() > limit) {
    return Error{"the attach " + std::string(what) + " is " + std::to_string(value.size()) +
                 " bytes long; the attach protocol allows at most " + std::to_string(limit) + ", shorten it"};
  }
  return {};
}

}  // namespace

Result<std::string> encode_request(std::string_view command, const Arguments& args) {
  if (auto ok = check_string("command", command, kMaxCommandBytes); !ok) return ok.error();
  std::string request = "1";
  request += '\0';
  request += command;
  request += '\0';
  for (std::string_view arg : args) {
    if (auto ok = check_string("argument of '" + std::string(command) + "'", arg, kMaxArgumentBytes); !ok) {
      return ok.error();
    }
    request += arg;
    request += '\0';
  }
  return request;
}

std::optional<Reply> parse_reply(std::string_view bytes) {
  size_t newline = bytes.find('\n');
  auto code = parse_int(bytes.substr(0, newline));
  if (!code) return std::nullopt;
  Reply reply;
  reply.code = *code;
  if (newline != std::string_view::npos) reply.text = bytes.substr(newline + 1);
  return reply;
}

LoadReply parse_load_reply(const Reply& reply) {
  LoadReply load;
  std::string_view text = reply.text;
  std::string_view line = text.substr(0, text.find('\n'));
  constexpr std::string_view kReturnCode = "return code: ";
  if (reply.code == 0) {
    if (line.substr(0, kReturnCode.size()) == kReturnCode) {
      load.agent_code = parse_int(line.substr(kReturnCode.size()));
    } else if (!line.empty() && (std::isdigit(static_cast<unsigned char>(line[0])) || line[0] == '-')) {
      load.agent_code = parse_int(line);
    }
  }
  if (!load.agent_code) load.reason = reply.text;
  return load;
}

std::string one_line(std::string_view text) {
  std::string out;
  bool pending_space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty()) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

}  // namespace nmprof::attach
