// Rust's legacy mangling: an Itanium-style nested name _ZN<len><element>...E whose
// last element is the hash h<16 hex digits>. Elements escape the characters that
// Itanium names cannot hold: $LT$ for '<', $u7b$ for '{', ".." for "::" and so on.
#include <algorithm>
#include <cctype>
#include <vector>

#include "formats/mangling/rust_demangle.h"
#include "formats/text/utf8.h"

namespace nmprof::symbols {

using text::is_scalar_value;
using text::is_control;
using text::append_utf8;

namespace {

bool is_hash(std::string_view element) {
  return element.size() == 17 && element[0] == 'h' &&
         std::ranges::all_of(element.substr(1), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// The character a `$...$` escape stands for, appended to `out`; false if unknown.
bool append_escape(std::string& out, std::string_view escape) {
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"SP", '@'}, {"BP", '*'}, {"RF", '&'}, {"LT", '<'}, {"GT", '>'}, {"LP", '('}, {"RP", ')'}, {"C", ','}};
  for (auto [name, c] : kNamed) {
    if (escape == name) {
      out += c;
      return true;
    }
  }
  // $u<lowercase hex>$: a code point, such as $u7b$ for '{'.
  std::string_view digits = escape.substr(std::min<size_t>(1, escape.size()));
  if (!escape.starts_with('u') || digits.empty() || digits.size() > 6) return false;
  char32_t c = 0;
  for (char digit : digits) {
    if (digit >= '0' && digit <= '9') {
      c = c * 16 + (digit - '0');
    } else if (digit >= 'a' && digit <= 'f') {
      c = c * 16 + (digit - 'a' + 10);
    } else {
      return false;
    }
  }
  if (!is_scalar_value(c) || is_control(c)) return false;
  append_utf8(out, c);
  return true;
}

void append_element(std::string& out, std::string_view element) {
  if (element.starts_with("_$")) element.remove_prefix(1);  // '_' protects a leading '$'
  while (!element.empty()) {
    if (element.starts_with("..")) {
      out += "::";
      element.remove_prefix(2);
    } else if (element[0] == '$') {
      size_t end = element.find('$', 1);
      if (end == std::string_view::npos || !append_escape(out, element.substr(1, end - 1))) break;
      element.remove_prefix(end + 1);
    } else {
      size_t next = element.find_first_of("$.", 1);
      out += element.substr(0, next);
      element.remove_prefix(std::min(next, element.size()));
    }
  }
  out += element;  // an escape we could not read stays as it is
}

}  // namespace

std::optional<RustName> demangle_rust_legacy(std::string_view symbol) {
  if (!symbol.starts_with("_ZN")) return std::nullopt;
  std::vector<std::string_view> elements;
  size_t pos = 3;
  while (pos < symbol.size() && symbol[pos] != 'E') {
    size_t length = 0;
    if (!std::isdigit(static_cast<unsigned char>(symbol[pos]))) return std::nullopt;
    for (; pos < symbol.size() && std::isdigit(static_cast<unsigned char>(symbol[pos])); ++pos) {
      length = length * 10 + (symbol[pos] - '0');
      if (length > symbol.size()) return std::nullopt;
    }
    if (symbol.size() - pos < length) return std::nullopt;
    elements.push_back(symbol.substr(pos, length));
    pos += length;
  }
  if (pos == symbol.size() || elements.size() < 2 || !is_hash(elements.back())) return std::nullopt;
  if (std::ranges::any_of(symbol.substr(0, pos), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return std::nullopt;
  }

  RustName name{{}, pos + 1};
  for (size_t i = 0; i + 1 < elements.size(); ++i) {
    if (i > 0) name.readable += "::";
    append_element(name.readable, elements[i]);
  }
  return name;
}

}  // namespace nmprof::symbols
