#include "cli/report/render/text_layout.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace nmprof::report {
namespace {

bool is_control(char c) { return (c >= 0 && c < 0x20) || c == 0x7f; }

}  // namespace

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

std::string cut_end(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  size_t end = width - 3;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) end--;  // UTF-8 boundary
  return std::string(s.substr(0, end)) + "...";
}

void write_wrapped(std::ostream& out, std::string_view prefix, std::string_view text, size_t width) {
  const size_t room = width > prefix.size() ? width - prefix.size() : 1;
  std::string indent(prefix.size(), ' ');
  std::string_view lead = prefix;
  while (!text.empty()) {
    size_t take = text.size();
    if (take > room) {
      size_t space = text.rfind(' ', room);
      // A word longer than the line (a path, say) stays whole rather than cut.
      take = space != std::string_view::npos && space > 0 ? space : std::min(text.find(' ', room), text.size());
    }
    out << lead << text.substr(0, take) << '\n';
    text.remove_prefix(take);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    lead = indent;
  }
}

std::string shell_quote(std::string_view path) {
  bool plain = !path.empty();
  for (char c : path)
    if (!(isalnum(static_cast<unsigned char>(c)) || std::string_view("_./-+:=,@%").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return std::string(path);
  if (std::none_of(path.begin(), path.end(), is_control)) {
    std::string quoted = "'";
    for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }
  // A newline or an escape sequence must not reach the terminal: $'...' spells them.
  std::string quoted = "$'";
  for (char c : path) {
    if (is_control(c)) {
      char hex[5];
      snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      quoted += hex;
    } else {
      if (c == '\'' || c == '\\') quoted += '\\';
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string files_text(const std::vector<std::string>& files) {
  if (files.size() <= 1) return files.empty() ? "" : files.front();
  return files.front() + " ... " + files.back() + " (" + std::to_string(files.size()) + " files)";
}

std::string shell_quote(const std::vector<std::string>& paths) {
  std::string quoted;
  for (const std::string& path : paths) quoted += (quoted.empty() ? "" : " ") + shell_quote(path);
  return quoted;
}

}  // namespace nmprof::report
