#include "agent/options.h"

#include <cctype>
#include <charconv>
#include <ctime>

namespace nmprof {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<unsigned> parse_unsigned(std::string_view text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
  uint64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  auto [rest, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || rest == begin) return std::nullopt;
  std::string unit = lower(std::string_view(rest, static_cast<size_t>(end - rest)));
  int shift = 0;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else {
    static const char kUnits[] = "kmgt";
    size_t pos = std::string_view(kUnits).find(unit[0]);
    std::string_view suffix = std::string_view(unit).substr(1);
    if (pos == std::string_view::npos || !(suffix.empty() || suffix == "b" || suffix == "ib")) return std::nullopt;
    shift = 10 * static_cast<int>(pos + 1);
  }
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::string format_size(uint64_t bytes) {
  static const char kUnits[] = "kmgt";
  int unit = -1;
  while (bytes && bytes % 1024 == 0 && unit < 3) {
    bytes /= 1024;
    unit++;
  }
  std::string s = std::to_string(bytes);
  if (unit >= 0) s += kUnits[unit];
  return s;
}

std::optional<std::string> parse_agent_options(std::string_view text, AgentOptions& options) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (eq == std::string_view::npos) return "option '" + std::string(key) + "' needs a value (" + std::string(key) + "=...)";
    if (key == "nativemem" || key == "interval") {
      auto size = parse_size(value);
      if (!size) return "bad size '" + std::string(value) + "' for " + std::string(key) + " (examples: 512k, 1m, 0)";
      options.interval = *size;
    } else if (key == "file") {
      if (value.empty()) return std::string("file= needs a path");
      options.file = std::string(value);
    } else if (key == "stackdepth") {
      auto depth = parse_unsigned(value);
      if (!depth || *depth == 0 || *depth > kMaxStackDepth)
        return "bad stackdepth '" + std::string(value) + "' (1.." + std::to_string(kMaxStackDepth) + ")";
      options.stack_depth = *depth;
    } else {
      return "unknown option '" + std::string(key) + "' (known: nativemem, file, stackdepth)";
    }
  }
  return std::nullopt;
}

std::string format_agent_options(const AgentOptions& options) {
  std::string s = "nativemem=" + format_size(options.interval);
  if (!options.file.empty()) s += ",file=" + options.file;
  if (options.stack_depth != kDefaultStackDepth) s += ",stackdepth=" + std::to_string(options.stack_depth);
  return s;
}

std::string expand_path_template(std::string_view pattern, long pid, long when) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); i++) {
    char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out += c;
      continue;
    }
    char next = pattern[++i];
    if (next == 'p') {
      out += std::to_string(pid);
    } else if (next == 't') {
      time_t t = when;
      struct tm tm;
      localtime_r(&t, &tm);
      char buf[32];
      strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
      out += buf;
    } else if (next == '%') {
      out += '%';
    } else {
      out += '%';
      out += next;
    }
  }
  return out;
}

}  // namespace nmprof
