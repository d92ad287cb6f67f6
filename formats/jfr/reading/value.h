// One decoded JFR value of any type. Scalars sit inline; a constant-pool reference
// stays a (type, key) pair until someone resolves it, so decoding never chases pools
// by itself (jfr-format.md section 8: resolve lazily).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/jfr/reading/type_system.h"

namespace nmprof::jfr {

class Value {
 public:
  enum class Kind : uint8_t { Null, Integer, Float, String, Reference, Struct, Array };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }

  // Integer (booleans are 0/1), or a Float truncated (clamped to int64_t's range, NaN
  // as 0: a file may hold any float); 0 otherwise.
  int64_t integer() const { return kind_ == Kind::Float ? truncated(float_) : integer_; }
  // Float, or an Integer converted; 0 otherwise.
  double number() const { return kind_ == Kind::Float ? float_ : static_cast<double>(integer_); }
  // String; empty otherwise.
  const std::string& string() const&;
  std::string string() &&;
  // Reference: the pool's type and the key. Struct: the struct's type.
  const Type* type() const { return type_; }
  uint64_t key() const { return static_cast<uint64_t>(integer_); }
  // Struct fields in declaration order, or Array elements.
  const std::vector<Value>& elements() const&;
  std::vector<Value> elements() &&;
  // Struct: the named field; a null value when absent or not a struct.
  const Value& field(std::string_view name) const&;
  // (Parts of a temporary, such as a resolved pool entry, are returned by value so
  // that `chunk.resolve(r).field("frames").elements()` does not dangle.)
  Value field(std::string_view name) &&;

  void set_null() { reset(Kind::Null); }
  void set_integer(int64_t v) {
    reset(Kind::Integer);
    integer_ = v;
  }
  void set_float(double v) {
    reset(Kind::Float);
    float_ = v;
  }
  // Returns the (cleared) string to fill in.
  std::string& set_string() {
    reset(Kind::String);
    string_.clear();
    return string_;
  }
  void set_reference(const Type* pool_type, uint64_t key) {
    reset(Kind::Reference);
    type_ = pool_type;
    integer_ = static_cast<int64_t>(key);
  }
  // Returns the n elements to fill in.
  std::vector<Value>& set_struct(const Type* type, size_t n) {
    reset(Kind::Struct);
    type_ = type;
    elements_.resize(n);
    return elements_;
  }
  std::vector<Value>& set_array(size_t n) {
    reset(Kind::Array);
    elements_.resize(n);
    return elements_;
  }

 private:
  static int64_t truncated(double v) {
    if (!(v == v)) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v < -0x1p63) return INT64_MIN;
    return static_cast<int64_t>(v);
  }
  int field_slot(std::string_view name) const;
  // Keeps string and element storage allocated so a reused value decodes without allocating.
  void reset(Kind kind) {
    kind_ = kind;
    type_ = nullptr;
    integer_ = 0;
    float_ = 0;
  }

  Kind kind_ = Kind::Null;
  const Type* type_ = nullptr;
  int64_t integer_ = 0;
  double float_ = 0;
  std::string string_;
  std::vector<Value> elements_;
};

}  // namespace nmprof::jfr
