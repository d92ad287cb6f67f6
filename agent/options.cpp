#include "agent/options.h"

#include <cctype>
#include <charconv>
#include <ctime>
#include <vector>

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

constexpr std::string_view kOptionKeys[] = {"nativemem", "interval", "file", "stackdepth", "live", "maxtracked",
                                            "reply"};

bool starts_with_known_key(std::string_view item) {
  size_t eq = item.find('=');
  for (std::string_view key : kOptionKeys)
    if (item.substr(0, eq) == key) return true;
  return false;
}

// Splits at commas, except that a piece which does not start with an option name
// continues a file= path ("file=/tmp/a,b.jfr").
std::vector<std::string> split_options(std::string_view text) {
  std::vector<std::string> items;
  // Every piece counts, the empty one after a trailing comma too: "file=a," names "a,".
  for (size_t start = 0;;) {
    size_t comma = text.find(',', start);
    std::string_view piece = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (!items.empty() && items.back().rfind("file=", 0) == 0 && !starts_with_known_key(piece))
      items.back() += "," + std::string(piece);
    else if (!piece.empty())
      items.emplace_back(piece);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
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
  for (const std::string& text_item : split_options(text)) {
    std::string_view item = text_item;
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
    } else if (key == "live") {
      if (value != "true" && value != "false") return "live= takes true or false, not '" + std::string(value) + "'";
      options.live = value == "true";
    } else if (key == "maxtracked") {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n == 0)
        return "bad maxtracked '" + std::string(value) + "' (a count of blocks, e.g. 262144)";
      options.max_tracked = n;
    } else if (key == "reply") {
      options.reply = std::string(value);
    } else {
      return "unknown option '" + std::string(key) + "' (known: nativemem, file, stackdepth, live, maxtracked)";
    }
  }
  return std::nullopt;
}

std::string format_agent_options(const AgentOptions& options) {
  std::string s = "nativemem=" + format_size(options.interval);
  if (options.stack_depth != kDefaultStackDepth) s += ",stackdepth=" + std::to_string(options.stack_depth);
  if (!options.live) s += ",live=false";
  if (options.max_tracked != kDefaultMaxTracked) s += ",maxtracked=" + std::to_string(options.max_tracked);
  if (!options.reply.empty()) s += ",reply=" + options.reply;
  if (!options.file.empty()) s += ",file=" + options.file;
  return s;
}

std::string local_time_text(long when) {
  time_t t = when;
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string expand_path_template(std::string_view pattern, long pid, std::string_view time_text) {
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
      out += time_text;
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
