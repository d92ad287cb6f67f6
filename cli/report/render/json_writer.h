// A minimal streaming JSON writer: indented (or compact) output, escaped strings (invalid UTF-8
// replaced, so any parser accepts it), numbers as numbers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace nmprof::report {

class JsonWriter {
 public:
  // compact: no indentation or line breaks (data embedded in a page).
  explicit JsonWriter(std::ostream& out, bool compact = false) : out_(out), compact_(compact) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  // The key of the next value inside an object.
  void key(std::string_view name);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(double v);
  void value(int64_t v);
  void value(uint64_t v);
  void value(bool v);
  void null();

  template <class T>
  void field(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

 private:
  void open(char bracket);
  void close(char bracket);
  void before_value();
  void newline();
  void write_string(std::string_view s);

  std::ostream& out_;
  bool compact_;
  std::vector<bool> has_items_;  // per open bracket
  bool after_key_ = false;
};

}  // namespace nmprof::report
