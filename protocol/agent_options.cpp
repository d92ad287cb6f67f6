#include "protocol/agent_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <vector>

#include "formats/jfr/nmprof_schema.h"

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

constexpr std::string_view kOptionKeys[] = {"nativemem", "interval", "rate",  "file", "stackdepth", "live",
                                            "maxtracked", "maxsize", "output", "reply", "token", "tag", "attributes",
                                            "seccomp", "broker", "exitwatch"};

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool escapable(char c) { return c == ',' || c == '=' || c == '\\'; }

// The position of the first `c` not escaped by a backslash, or npos.
size_t find_unescaped(std::string_view text, char c) {
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '\\' && i + 1 < text.size() && escapable(text[i + 1])) {
      i++;
    } else if (text[i] == c) {
      return i;
    }
  }
  return std::string_view::npos;
}

// A backslash before ',', '=' or '\\' stands for that character; any other is itself.
std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '\\' && i + 1 < text.size() && escapable(text[i + 1])) i++;
    out += text[i];
  }
  return out;
}

bool starts_with_known_key(std::string_view item) {
  std::string_view key = item.substr(0, find_unescaped(item, '='));
  for (std::string_view known : kOptionKeys)
    if (key == known) return true;
  return false;
}

// Values that may hold commas: a path, and a tag's value.
bool continues_value(const std::string& item) { return item.rfind("file=", 0) == 0 || item.rfind("tag=", 0) == 0; }

// Splits at unescaped commas (the pieces keep their escapes), except that a piece which does not start with an option name
// continues a file= path or a tag ("file=/tmp/a,b.jfr", "tag=teams=a,b").
std::vector<std::string> split_options(std::string_view text) {
  std::vector<std::string> items;
  // Every piece counts, the empty one after a trailing comma too: "file=a," names "a,".
  for (size_t start = 0;;) {
    size_t found = find_unescaped(text.substr(start), ',');
    size_t comma = found == std::string_view::npos ? found : start + found;
    std::string_view piece = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (!items.empty() && continues_value(items.back()) && !starts_with_known_key(piece))
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

uint64_t tracked_blocks_cap(const AgentOptions& options) {
  if (options.max_tracked) return options.max_tracked;
  return options.interval == 0 ? kEveryAllocationMaxTracked : kDefaultMaxTracked;
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
    size_t eq = find_unescaped(item, '=');
    std::string key_text = unescape(item.substr(0, eq));
    std::string value_text = eq == std::string_view::npos ? std::string() : unescape(item.substr(eq + 1));
    std::string_view key = key_text;
    std::string_view value = value_text;
    if (eq == std::string_view::npos) return "option '" + std::string(key) + "' needs a value (" + std::string(key) + "=...)";
    if (key == "nativemem" || key == "interval") {
      auto size = parse_size(value);
      if (!size) return "bad size '" + std::string(value) + "' for " + std::string(key) + " (examples: 512k, 1m, 0)";
      options.interval = *size;
    } else if (key == "rate") {
      auto rate = parse_unsigned(value);
      if (!rate || *rate > kMaxRate)
        return "bad rate '" + std::string(value) + "' (samples per second, 0.." + std::to_string(kMaxRate) +
               "; 0 keeps the interval fixed)";
      options.rate = *rate;
    } else if (key == "output") {
      options.output = std::string(value);
    } else if (key == "file") {
      if (value.empty()) return std::string("file= needs a path");
      options.file = std::string(value);
    } else if (key == "stackdepth") {
      auto depth = parse_unsigned(value);
      if (!depth || *depth == 0 || *depth > kMaxStackDepth)
        return "bad stackdepth '" + std::string(value) + "' (1.." + std::to_string(kMaxStackDepth) + ")";
      options.stack_depth = *depth;
    } else if (key == "exitwatch") {
      if (value != "true" && value != "false")
        return "exitwatch= takes true or false, not '" + std::string(value) + "'";
      options.exit_watch = value == "true";
    } else if (key == "live") {
      if (value != "true" && value != "false") return "live= takes true or false, not '" + std::string(value) + "'";
      options.live = value == "true";
    } else if (key == "maxtracked") {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n == 0)
        return "bad maxtracked '" + std::string(value) + "' (a count of blocks, e.g. 262144)";
      options.max_tracked = n;
    } else if (key == "maxsize") {
      auto size = parse_size(value);
      if (!size || (*size != 0 && *size < kMinMaxSize))
        return "bad maxsize '" + std::string(value) + "' (at least " + format_size(kMinMaxSize) +
               ", e.g. 100m; 0 for no limit)";
      options.max_size = *size;
    } else if (key == "reply") {
      options.reply = std::string(value);
    } else if (key == "tag") {
      Tag tag;
      if (auto error = parse_tag(value, &tag)) return error;
      options.tags.push_back(std::move(tag));
    } else if (key == "attributes") {
      if (auto error = parse_context_attributes(value, ';', &options.context_attributes)) return error;
    } else if (key == "token") {
      options.token = std::string(value);
    } else if (key == "broker") {
      size_t colon = value.find(':');
      auto fd = parse_unsigned(value.substr(0, colon));
      uint64_t inode = 0;
      std::string_view inode_text = colon == std::string_view::npos ? std::string_view() : value.substr(colon + 1);
      auto [end, ec] = std::from_chars(inode_text.data(), inode_text.data() + inode_text.size(), inode);
      if (!fd || ec != std::errc() || end != inode_text.data() + inode_text.size() || inode == 0)
        return "bad broker '" + std::string(value) + "' (FD:INODE, set by nmprof run)";
      options.broker_fd = static_cast<int>(*fd);
      options.broker_inode = inode;
    } else if (key == "seccomp") {
      auto filters = parse_unsigned(value);
      if (!filters) return "bad seccomp '" + std::string(value) + "' (how many seccomp filters were checked, e.g. 1)";
      options.seccomp_checked = *filters;
    } else {
      return "unknown option '" + std::string(key) +
             "' (known: nativemem, rate, file, stackdepth, live, maxtracked, maxsize, output, tag, attributes, seccomp, broker, exitwatch)";
    }
  }
  return std::nullopt;
}

std::string escape_option_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (escapable(c)) out += '\\';
    out += c;
  }
  return out;
}

std::string format_agent_options(const AgentOptions& options) {
  std::string s = "nativemem=" + format_size(options.interval);
  if (options.rate) s += ",rate=" + std::to_string(options.rate);
  if (options.stack_depth != kDefaultStackDepth) s += ",stackdepth=" + std::to_string(options.stack_depth);
  if (!options.live) s += ",live=false";
  if (options.exit_watch) s += ",exitwatch=true";
  if (options.max_tracked) s += ",maxtracked=" + std::to_string(options.max_tracked);
  if (options.max_size) s += ",maxsize=" + format_size(options.max_size);
  if (!options.output.empty()) s += ",output=" + escape_option_value(options.output);
  if (!options.reply.empty()) s += ",reply=" + escape_option_value(options.reply);
  if (!options.token.empty()) s += ",token=" + escape_option_value(options.token);
  if (options.seccomp_checked) s += ",seccomp=" + std::to_string(options.seccomp_checked);
  if (options.broker_inode)
    s += ",broker=" + std::to_string(options.broker_fd) + ":" + std::to_string(options.broker_inode);
  for (const auto& [key, value] : options.tags) s += ",tag=" + escape_option_value(key + "=" + value);
  for (size_t i = 0; i < options.context_attributes.size(); i++)
    s += (i ? ";" : ",attributes=") + options.context_attributes[i];
  if (!options.file.empty()) s += ",file=" + escape_option_value(options.file);
  return s;
}

std::optional<std::string> parse_tag(std::string_view text, Tag* tag) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return "bad tag '" + std::string(text) + "' (KEY=VALUE, e.g. service=checkout)";
  *tag = {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  return std::nullopt;
}

std::optional<std::string> parse_context_attributes(std::string_view text, char separator,
                                                    std::vector<std::string>* names) {
  names->clear();
  for (size_t start = 0; start <= text.size();) {
    size_t end = std::min(text.find(separator, start), text.size());
    std::string_view name = text.substr(start, end - start);
    if (!is_identifier(name) || name.size() > kMaxAttributeNameLength)
      return "bad context attribute name '" + std::string(name) +
             "' (letters, digits and _, not starting with a digit, at most 63)";
    if (jfr::schema::is_malloc_field(name))
      return "context attribute name '" + std::string(name) + "' is a field of profiler.Malloc";
    for (const std::string& earlier : *names)
      if (name == earlier) return "context attribute '" + std::string(name) + "' is declared twice";
    names->emplace_back(name);
    if (names->size() > kMaxContextAttributes)
      return "too many context attributes (at most " + std::to_string(kMaxContextAttributes) + ")";
    start = end + 1;
  }
  return std::nullopt;
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
