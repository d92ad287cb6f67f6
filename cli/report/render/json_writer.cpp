#include "cli/report/render/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace nmprof::report {
namespace {

// Length of the valid UTF-8 sequence at s[0], or 0 if it is not one.
size_t utf8_length(std::string_view s) {
  auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b = byte(0);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; i++)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

void JsonWriter::key(std::string_view name) {
  before_value();
  write_string(name);
  out_ << (compact_ ? ":" : ": ");
  after_key_ = true;
}

void JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
}

void JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ << "null";
    return;
  }
  // A whole number as one (42000000, not the shortest form's 4.2e+07), where a
  // double holds it exactly.
  constexpr double kExact = 9007199254740992.0;  // 2^53
  char buf[32];
  auto [end, error] = std::abs(v) < kExact && v == std::trunc(v)
                          ? std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v))
                          : std::to_chars(buf, buf + sizeof buf, v);
  out_.write(buf, end - buf);
}

void JsonWriter::value(int64_t v) {
  before_value();
  out_ << v;
}

void JsonWriter::value(uint64_t v) {
  before_value();
  out_ << v;
}

void JsonWriter::value(bool v) {
  before_value();
  out_ << (v ? "true" : "false");
}

void JsonWriter::null() {
  before_value();
  out_ << "null";
}

void JsonWriter::open(char bracket) {
  before_value();
  out_ << bracket;
  has_items_.push_back(false);
}

void JsonWriter::close(char bracket) {
  bool had_items = has_items_.back();
  has_items_.pop_back();
  if (had_items) newline();
  out_ << bracket;
  if (has_items_.empty() && !compact_) out_ << '\n';
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_items_.empty()) return;
  if (has_items_.back()) out_ << ',';
  has_items_.back() = true;
  newline();
}

void JsonWriter::newline() {
  if (!compact_) out_ << '\n' << std::string(2 * has_items_.size(), ' ');
}

void JsonWriter::write_string(std::string_view s) {
  out_ << '"';
  while (!s.empty()) {
    size_t n = utf8_length(s);
    unsigned char c = static_cast<unsigned char>(s[0]);
    if (n == 0) {
      out_ << "\\ufffd";
      n = 1;
    } else if (c == '"' || c == '\\') {
      out_ << '\\' << s[0];
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out_ << buf;
    } else {
      out_.write(s.data(), static_cast<std::streamsize>(n));
    }
    s.remove_prefix(n);
  }
  out_ << '"';
}

}  // namespace nmprof::report
