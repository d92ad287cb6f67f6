// Rust's v0 mangling (RFC 2603): "_R", then a path in a prefix grammar. Paths
// nest (N: a name in a namespace, I: generic arguments, M/X/Y: impls), types
// and constants are spelled out, and B<n>_ refers back to the item that starts
// n bytes after "_R". The parser prints as it reads, in the form of
// rustc-demangle's "{:#}" output.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include "formats/mangling/punycode.h"
#include "formats/mangling/rust_demangle.h"
#include "formats/text/utf8.h"

namespace nmprof::symbols {

using text::is_scalar_value;
using text::is_control;
using text::append_utf8;
using text::decode_utf8;

namespace {

constexpr int kMaxDepth = 200;            // nesting of paths, types and constants; real names reach ~40
constexpr size_t kMaxOutput = 64 * 1024;  // backrefs can make output exponential in the input's length

std::optional<std::string_view> basic_type(char tag) {
  switch (tag) {
    case 'a': return "i8";
    case 'b': return "bool";
    case 'c': return "char";
    case 'd': return "f64";
    case 'e': return "str";
    case 'f': return "f32";
    case 'h': return "u8";
    case 'i': return "isize";
    case 'j': return "usize";
    case 'l': return "i32";
    case 'm': return "u32";
    case 'n': return "i128";
    case 'o': return "u128";
    case 's': return "i16";
    case 't': return "u16";
    case 'u': return "()";
    case 'v': return "...";
    case 'x': return "i64";
    case 'y': return "u64";
    case 'z': return "!";
    case 'p': return "_";
    default: return std::nullopt;
  }
}

// The value of a constant's hex digits if it fits in 64 bits.
std::optional<uint64_t> hex_value(std::string_view digits) {
  digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size()));
  if (digits.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : digits) value = value * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  return value;
}

// Rust's char::escape_debug, except that every non-control character counts as printable.
void append_escaped(std::string& out, char32_t c) {
  switch (c) {
    case '\0': out += "\\0"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    case '\n': out += "\\n"; return;
    case '\\': out += "\\\\"; return;
    case '"': out += "\\\""; return;
    case '\'': out += "\\'"; return;
  }
  if (!is_control(c)) {
    append_utf8(out, c);
    return;
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (char32_t rest = c; rest != 0 || hex.empty(); rest >>= 4) hex.insert(hex.begin(), kDigits[rest & 0xF]);
  out += "\\u{" + hex + "}";
}

struct Identifier {
  std::string_view ascii;
  std::string_view punycode;  // the encoded non-ASCII rest, if any

  bool empty() const { return ascii.empty() && punycode.empty(); }
};

// Counts the nesting of paths, types, constants and backrefs for the depth limit.
class Nesting {
 public:
  explicit Nesting(int& depth) : depth_(depth) { ++depth_; }
  ~Nesting() { --depth_; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;
  bool too_deep() const { return depth_ > kMaxDepth; }

 private:
  int& depth_;
};

class V0Parser {
 public:
  explicit V0Parser(std::string_view mangled) : in_(mangled) {}

  // <symbol> = <path> [<instantiating-crate>], read from after "_R".
  bool symbol() {
    if (pos_ == in_.size() || in_[pos_] < 'A' || in_[pos_] > 'Z') return false;  // a digit: an unknown version
    if (!path(true)) return false;
    // The instantiating crate, the one that made this copy of a generic item, is not printed.
    if (pos_ < in_.size() && in_[pos_] >= 'A' && in_[pos_] <= 'Z') return skipped([&] { return path(false); });
    return true;
  }

  size_t position() const { return pos_; }
  std::string take_output() { return std::move(out_); }

 private:
  // <path>; `in_value` paths write generic arguments as ::<...>.
  bool path(bool in_value) {
    Nesting nesting(depth_);
    char tag;
    if (nesting.too_deep() || !next(tag)) return false;
    switch (tag) {
      case 'C': {  // crate root: C [<disambiguator>] <identifier>
        uint64_t disambiguator;
        Identifier name;
        return opt_base62('s', disambiguator) && identifier(name) && print(name);
      }
      case 'N':  // N <namespace> <path> [<disambiguator>] <identifier>
        return nested_path(in_value);
      case 'M':  // inherent impl: M <impl-path> <type>
      case 'X':  // trait impl: X <impl-path> <type> <path>
      case 'Y': {  // trait definition: Y <type> <path>
        if (tag != 'Y' && !impl_path()) return false;
        if (!print("<") || !type()) return false;
        if (tag != 'M' && !(print(" as ") && path(false))) return false;
        return print(">");
      }
      case 'I':  // generic arguments: I <path> {<generic-arg>} E
        return path(in_value) && (!in_value || print("::")) && print("<") &&
               list(", ", [&] { return generic_arg(); }) && print(">");
      case 'B':
        return backref([&] { return path(in_value); });
      default:
        return false;
    }
  }

  bool nested_path(bool in_value) {
    char ns;
    uint64_t disambiguator;
    Identifier name;
    if (!next(ns) || !std::isalpha(static_cast<unsigned char>(ns))) return false;
    if (!path(in_value) || !opt_base62('s', disambiguator) || !identifier(name)) return false;
    if (ns >= 'a' && ns <= 'z') return name.empty() || (print("::") && print(name));  // an ordinary name
    // Uppercase namespaces are special, such as {closure#0} and {shim:vtable#0}.
    std::string_view kind = ns == 'C' ? "closure" : ns == 'S' ? "shim" : std::string_view(&ns, 1);
    return print("::{") && print(kind) && (name.empty() || (print(":") && print(name))) && print("#") &&
           print(std::to_string(disambiguator)) && print("}");
  }

  // <impl-path> = [<disambiguator>] <path>: where the impl is, which its <Type as Trait> replaces.
  bool impl_path() {
    uint64_t disambiguator;
    return opt_base62('s', disambiguator) && skipped([&] { return path(false); });
  }

  bool generic_arg() {
    uint64_t index;
    if (eat('L')) return base62(index) && lifetime(index);
    if (eat('K')) return constant(false);
    return type();
  }

  bool type() {
    Nesting nesting(depth_);
    char tag;
    if (nesting.too_deep() || !next(tag)) return false;
    if (auto basic = basic_type(tag)) return print(*basic);
    switch (tag) {
      case 'R':  // &T, R [<lifetime>] <type>
      case 'Q': {  // &mut T
        uint64_t index = 0;
        if (!print("&") || (eat('L') && !base62(index))) return false;
        if (index != 0 && !(lifetime(index) && print(" "))) return false;
        return (tag == 'R' || print("mut ")) && type();
      }
      case 'P': return print("*const ") && type();
      case 'O': return print("*mut ") && type();
      case 'A': return print("[") && type() && print("; ") && constant(true) && print("]");
      case 'S': return print("[") && type() && print("]");
      case 'T': {  // tuple: T {<type>} E
        if (!print("(")) return false;
        auto count = list(", ", [&] { return type(); });
        return count && (*count != 1 || print(",")) && print(")");
      }
      case 'F': return binder([&] { return fn_signature(); });
      case 'D': return dyn_type();
      case 'B': return backref([&] { return type(); });
      default:  // a named type is a path
        --pos_;
        return path(false);
    }
  }

  // F [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type>, after the binder.
  bool fn_signature() {
    bool is_unsafe = eat('U');
    std::string abi;
    if (eat('K')) {
      Identifier name;
      if (eat('C')) {
        abi = "C";
      } else if (!identifier(name) || name.ascii.empty() || !name.punycode.empty()) {
        return false;
      } else {
        abi = name.ascii;
        std::replace(abi.begin(), abi.end(), '_', '-');  // "system_unwind" is extern "system-unwind"
      }
    }
    if (is_unsafe && !print("unsafe ")) return false;
    if (!abi.empty() && !(print("extern \"") && print(abi) && print("\" "))) return false;
    if (!print("fn(") || !list(", ", [&] { return type(); }) || !print(")")) return false;
    return eat('u') || (print(" -> ") && type());  // a () return type is not printed
  }

  // D <dyn-bounds> <lifetime>: dyn Trait<Assoc = T> + Send + 'a
  bool dyn_type() {
    uint64_t index;
    if (!print("dyn ") || !binder([&] { return list(" + ", [&] { return dyn_trait(); }).has_value(); })) return false;
    if (!eat('L') || !base62(index)) return false;
    return index == 0 || (print(" + ") && lifetime(index));
  }

  // <path> {"p" <identifier> <type>}: associated types join the trait's generic arguments.
  bool dyn_trait() {
    bool open = false;
    if (!path_with_open_generics(open)) return false;
    while (eat('p')) {
      Identifier name;
      if (!print(open ? ", " : "<") || !identifier(name) || !print(name) || !print(" = ") || !type()) return false;
      open = true;
    }
    return !open || print(">");
  }

  // A path whose generic argument list, if it ends the path, is left open for dyn_trait.
  bool path_with_open_generics(bool& open) {
    if (eat('B')) return backref([&] { return path_with_open_generics(open); });
    if (!eat('I')) return path(false);
    open = true;
    return path(false) && print("<") && list(", ", [&] { return generic_arg(); });
  }

  // Constants: generic arguments and array lengths. Compound values outside an
  // expression (`in_value` false) are braced, as in Rust source: foo::<{ [1, 2] }>.
  bool constant(bool in_value) {
    Nesting nesting(depth_);
    char tag;
    if (nesting.too_deep() || !next(tag)) return false;
    std::string_view digits;
    switch (tag) {
      case 'p': return print("_");
      case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
        return unsigned_constant();
      case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
        return (!eat('n') || print("-")) && unsigned_constant();
      case 'b': {
        if (!hex_digits(digits)) return false;
        auto value = hex_value(digits);
        return value && *value <= 1 && print(*value ? "true" : "false");
      }
      case 'c': {
        if (!hex_digits(digits)) return false;
        auto value = hex_value(digits);
        return value && *value <= 0x10FFFF && is_scalar_value(static_cast<char32_t>(*value)) &&
               print_quoted('\'', std::u32string(1, static_cast<char32_t>(*value)));
      }
      case 'B': return backref([&] { return constant(in_value); });
      case 'R':
        if (eat('e')) return string_literal();  // &str: "..." rather than &*"..."
        break;
    }
    if (!in_value && !print("{")) return false;
    if (!compound_constant(tag)) return false;
    return in_value || print("}");
  }

  bool compound_constant(char tag) {
    switch (tag) {
      case 'e': return print("*") && string_literal();  // str itself
      case 'R': return print("&") && constant(true);
      case 'Q': return print("&mut ") && constant(true);
      case 'A': return print("[") && list(", ", [&] { return constant(true); }) && print("]");
      case 'T': {
        if (!print("(")) return false;
        auto count = list(", ", [&] { return constant(true); });
        return count && (*count != 1 || print(",")) && print(")");
      }
      case 'V': {  // V <path> then U (unit), T <fields> E (tuple) or S <named fields> E (struct)
        char kind;
        if (!path(true) || !next(kind)) return false;
        if (kind == 'U') return true;
        if (kind == 'T') return print("(") && list(", ", [&] { return constant(true); }) && print(")");
        if (kind != 'S') return false;
        return print(" { ") && list(", ", [&] {
                 uint64_t disambiguator;
                 Identifier name;
                 return opt_base62('s', disambiguator) && identifier(name) && print(name) && print(": ") &&
                        constant(true);
               }) && print(" }");
      }
      default: return false;
    }
  }

  bool unsigned_constant() {
    std::string_view digits;
    if (!hex_digits(digits)) return false;
    if (auto value = hex_value(digits)) return print(std::to_string(*value));
    return print("0x") && print(digits);
  }

  // A constant string's bytes as hex digits, printed as a quoted, escaped UTF-8 string.
  bool string_literal() {
    std::string_view digits;
    if (!hex_digits(digits) || digits.size() % 2 != 0) return false;
    std::string bytes;
    for (size_t i = 0; i < digits.size(); i += 2) bytes += static_cast<char>(*hex_value(digits.substr(i, 2)));
    auto chars = decode_utf8(bytes);
    return chars && print_quoted('"', *chars);
  }

  bool print_quoted(char quote, const std::u32string& chars) {
    std::string text(1, quote);
    for (char32_t c : chars) {
      if ((c == '\'' || c == '"') && c != static_cast<char32_t>(quote)) {  // the other quote needs no escape
        text += static_cast<char>(c);
      } else {
        append_escaped(text, c);
      }
    }
    text += quote;
    return print(text);
  }

  // G <base-62-number>: the body binds that many + 1 lifetimes, printed for<'a, 'b> .
  template <typename Body>
  bool binder(Body body) {
    uint64_t count = 0;
    if (eat('G')) {
      if (!base62(count) || count >= kMaxOutput) return false;
      ++count;
    }
    if (count > 0 && printing_) {
      if (!print("for<")) return false;
      for (uint64_t i = 0; i < count; ++i) {
        ++bound_lifetimes_;
        if ((i > 0 && !print(", ")) || !lifetime(1)) return false;
      }
      if (!print("> ")) return false;
    } else {
      bound_lifetimes_ += count;
    }
    bool ok = body();
    bound_lifetimes_ -= count;
    return ok;
  }

  // A lifetime by de Bruijn index: 1 is the innermost bound one, 0 the erased '_.
  bool lifetime(uint64_t index) {
    if (!printing_) return true;
    if (index == 0) return print("'_");
    if (index > bound_lifetimes_) return false;
    uint64_t depth = bound_lifetimes_ - index;
    if (depth < 26) return print("'") && print(std::string(1, static_cast<char>('a' + depth)));
    return print("'_") && print(std::to_string(depth));
  }

  // B <base-62-number>: the item at that earlier position, read there by `item`.
  template <typename Item>
  bool backref(Item item) {
    size_t tag_position = pos_ - 1;
    uint64_t target;
    if (!base62(target) || target >= tag_position) return false;
    if (!printing_) return true;  // skipped text needs no backrefs followed
    Nesting nesting(depth_);
    if (nesting.too_deep()) return false;
    size_t resume = pos_;
    pos_ = target;
    bool ok = item();
    pos_ = resume;
    return ok;
  }

  // Items up to "E", with `separator` printed between them: their count, or nothing on error.
  template <typename Item>
  std::optional<size_t> list(std::string_view separator, Item item) {
    size_t count = 0;
    while (!eat('E')) {
      if ((count > 0 && !print(separator)) || !item()) return std::nullopt;
      ++count;
    }
    return count;
  }

  template <typename Parse>
  bool skipped(Parse parse) {
    bool was_printing = printing_;
    printing_ = false;
    bool ok = parse();
    printing_ = was_printing;
    return ok;
  }

  // <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes>; with "u",
  // the bytes are punycode: the ASCII characters, '_', then the encoded rest.
  bool identifier(Identifier& name) {
    bool is_punycode = eat('u');
    size_t length;
    if (!decimal(length)) return false;
    eat('_');  // separates bytes that start with a digit or '_'
    if (in_.size() - pos_ < length) return false;
    std::string_view bytes = in_.substr(pos_, length);
    pos_ += length;
    if (!is_punycode) {
      name = {bytes, {}};
      return true;
    }
    size_t split = bytes.rfind('_');
    name = split == std::string_view::npos ? Identifier{{}, bytes}
                                           : Identifier{bytes.substr(0, split), bytes.substr(split + 1)};
    return !name.punycode.empty();
  }

  bool decimal(size_t& value) {
    char c;
    if (!next(c) || c < '0' || c > '9') return false;
    value = static_cast<size_t>(c - '0');
    if (value == 0) return true;  // no leading zeros
    while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') {
      value = value * 10 + static_cast<size_t>(in_[pos_++] - '0');
      if (value > in_.size()) return false;
    }
    return true;
  }

  // <base-62-number> = {<0-9a-zA-Z>} "_": "_" is 0, "<n>_" is n + 1.
  bool base62(uint64_t& value) {
    if (eat('_')) {
      value = 0;
      return true;
    }
    uint64_t n = 0;
    for (char c; next(c);) {
      if (c == '_') {
        value = n + 1;
        return true;
      }
      uint64_t digit;
      if (c >= '0' && c <= '9') {
        digit = static_cast<uint64_t>(c - '0');
      } else if (c >= 'a' && c <= 'z') {
        digit = static_cast<uint64_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'Z') {
        digit = static_cast<uint64_t>(c - 'A' + 36);
      } else {
        return false;
      }
      if (n > (UINT64_MAX - 1 - digit) / 62) return false;
      n = n * 62 + digit;
    }
    return false;
  }

  // [<tag> <base-62-number>]: absent is 0, present is the number + 1 (disambiguators).
  bool opt_base62(char tag, uint64_t& value) {
    value = 0;
    if (!eat(tag)) return true;
    if (!base62(value)) return false;
    ++value;
    return value != 0;
  }

  // <hex-digits> "_", lowercase.
  bool hex_digits(std::string_view& digits) {
    size_t start = pos_;
    for (char c; next(c);) {
      if (c == '_') {
        digits = in_.substr(start, pos_ - 1 - start);
        return true;
      }
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return false;
  }

  bool next(char& c) {
    if (pos_ == in_.size()) return false;
    c = in_[pos_++];
    return true;
  }

  bool eat(char c) {
    if (pos_ == in_.size() || in_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool print(std::string_view text) {
    if (!printing_) return true;
    if (out_.size() + text.size() > kMaxOutput) return false;
    out_ += text;
    return true;
  }

  // Punycode that does not decode is printed as rustc-demangle does: punycode{ascii-encoded}.
  bool print(const Identifier& name) {
    if (name.punycode.empty()) return print(name.ascii);
    if (!printing_) return true;
    if (auto decoded = decode_punycode(name.ascii, name.punycode)) return print(*decoded);
    return print("punycode{") && (name.ascii.empty() || (print(name.ascii) && print("-"))) &&
           print(name.punycode) && print("}");
  }

  std::string_view in_;  // the symbol after "_R"
  size_t pos_ = 0;
  int depth_ = 0;
  bool printing_ = true;         // false while reading text that is not shown
  uint64_t bound_lifetimes_ = 0;  // lifetimes bound by the enclosing binders
  std::string out_;
};

}  // namespace

std::optional<RustName> demangle_rust_v0(std::string_view symbol) {
  if (!symbol.starts_with("_R")) return std::nullopt;
  if (std::ranges::any_of(symbol, [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return std::nullopt;
  }
  V0Parser parser(symbol.substr(2));
  if (!parser.symbol()) return std::nullopt;
  return RustName{parser.take_output(), parser.position() + 2};
}

}  // namespace nmprof::symbols
