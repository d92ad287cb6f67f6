#include "protocol/attach_request.h"

#include <charconv>

namespace nmprof {
namespace {

struct Command {
  AttachCommand command;
  std::string_view name;
};
constexpr Command kCommands[] = {{AttachCommand::Start, "start"},
                                 {AttachCommand::Status, "status"},
                                 {AttachCommand::Dump, "dump"},
                                 {AttachCommand::Stop, "stop"}};

}  // namespace

const char* attach_command_name(AttachCommand command) {
  for (const Command& c : kCommands)
    if (c.command == command) return c.name.data();
  return "start";
}

std::optional<std::string> parse_attach_request(std::string_view text, AttachRequest& request) {
  std::string_view word = text.substr(0, text.find(','));
  for (const Command& c : kCommands) {
    if (word != c.name) continue;
    request.command = c.command;
    text = word.size() < text.size() ? text.substr(word.size() + 1) : std::string_view();
    break;
  }
  return parse_agent_options(text, request.options);
}

std::string format_attach_request(const AttachRequest& request) {
  std::string options = format_agent_options(request.options);
  return std::string(attach_command_name(request.command)) + (options.empty() ? "" : "," + options);
}

std::string format_attach_reply(const AttachReply& reply) {
  std::string text;
  for (const auto& [key, value] : reply) {
    std::string line = value;
    for (char& c : line)
      if (c == '\n') c = ' ';
    text += key + "=" + line + "\n";
  }
  return text;
}

AttachReply parse_attach_reply(std::string_view text) {
  // The CLI prints these values: no control character (escape sequences) gets through.
  std::string printable(text);
  for (char& c : printable)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
  text = printable;
  AttachReply reply;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    size_t eq = line.find('=');
    if (eq != std::string_view::npos) reply[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return reply;
}

std::optional<uint64_t> reply_count(const AttachReply& reply, const std::string& key) {
  auto it = reply.find(key);
  if (it == reply.end() || it->second.empty()) return std::nullopt;
  const std::string& text = it->second;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

}  // namespace nmprof
