#include "cli/report/render/text_layout.h"

#include <algorithm>
#include <cctype>

namespace nmprof::report {

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
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace nmprof::report
