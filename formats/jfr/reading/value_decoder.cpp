#include "formats/jfr/reading/value_decoder.h"

#include <string>

#include "formats/jfr/reading/strings.h"

namespace nmprof::jfr {
namespace {

// Structs nest a few levels in practice; deeper nesting means a type that contains
// itself inline, which no producer writes and would never end.
constexpr int kMaxDepth = 32;

uint64_t array_length(ByteReader& in) {
  uint64_t n = in.varint();
  if (n > in.remaining()) throw FormatError("array length " + std::to_string(n) + " exceeds its record");
  return n;
}

void check_depth(int depth) {
  if (depth > kMaxDepth) throw FormatError("values nested too deeply (a type contains itself)");
}

}  // namespace

ValueDecoder::ValueDecoder(std::span<const uint8_t> chunk, const TypeSystem& types, const PoolIndex& pools)
    : chunk_(chunk), pools_(pools), string_type_(types.find("java.lang.String")) {}

void ValueDecoder::read(const Field& field, ByteReader& in, Value& out) const { read_field(field, in, out, 0); }

void ValueDecoder::skip(const Field& field, ByteReader& in) const { skip_field(field, in, 0); }

Value ValueDecoder::entry(const Type& type, uint64_t key) const {
  Value v;
  auto offset = pools_.find(type.id, key);
  if (!offset) return v;
  ByteReader in(chunk_, *offset);
  read_value(type, in, v);
  return v;
}

void ValueDecoder::read_field(const Field& field, ByteReader& in, Value& out, int depth) const {
  auto element = [&](Value& v) {
    if (field.constant_pool)
      v.set_reference(field.type, in.varint());
    else
      read_inline(*field.type, in, v, depth + 1);
  };
  if (!field.array) {
    element(out);
    return;
  }
  auto& elements = out.set_array(array_length(in));
  for (auto& e : elements) element(e);
}

void ValueDecoder::skip_field(const Field& field, ByteReader& in, int depth) const {
  uint64_t n = field.array ? array_length(in) : 1;
  for (; n > 0; n--) {
    if (field.constant_pool)
      in.varint();
    else
      skip_inline(*field.type, in, depth + 1);
  }
}

void ValueDecoder::read_inline(const Type& type, ByteReader& in, Value& out, int depth) const {
  check_depth(depth);
  switch (type.encoding) {
    case Encoding::Boolean: out.set_integer(in.u8() != 0); return;
    case Encoding::Byte: out.set_integer(static_cast<int8_t>(in.u8())); return;
    // Narrow integers are written as their unsigned bit pattern (section 3.1).
    case Encoding::Char: out.set_integer(static_cast<uint16_t>(in.varint())); return;
    case Encoding::Short: out.set_integer(static_cast<int16_t>(in.varint())); return;
    case Encoding::Int: out.set_integer(static_cast<int32_t>(in.varint())); return;
    case Encoding::Long: out.set_integer(static_cast<int64_t>(in.varint())); return;
    case Encoding::Float: out.set_float(in.f32()); return;
    case Encoding::Double: out.set_float(in.f64()); return;
    case Encoding::String: {
      uint64_t key = 0;
      StringKind kind = read_string(in, out.set_string(), key);
      if (kind == StringKind::Null) out.set_null();
      if (kind == StringKind::PoolKey) read_pooled_string(key, out);
      return;
    }
    case Encoding::Struct: {
      auto& fields = out.set_struct(&type, type.fields.size());
      for (size_t i = 0; i < fields.size(); i++) read_field(type.fields[i], in, fields[i], depth);
      return;
    }
  }
}

void ValueDecoder::skip_inline(const Type& type, ByteReader& in, int depth) const {
  check_depth(depth);
  switch (type.encoding) {
    case Encoding::Boolean:
    case Encoding::Byte: in.skip(1); return;
    case Encoding::Char:
    case Encoding::Short:
    case Encoding::Int:
    case Encoding::Long: in.varint(); return;
    case Encoding::Float: in.skip(4); return;
    case Encoding::Double: in.skip(8); return;
    case Encoding::String: skip_string(in); return;
    case Encoding::Struct:
      for (const auto& f : type.fields) skip_field(f, in, depth);
      return;
  }
}

void ValueDecoder::read_pooled_string(uint64_t key, Value& out) const {
  auto offset = string_type_ ? pools_.find(string_type_->id, key) : std::nullopt;
  if (!offset) {
    out.set_null();
    return;
  }
  ByteReader in(chunk_, *offset);
  uint64_t unused_key;
  StringKind kind = read_string(in, out.set_string(), unused_key);
  if (kind == StringKind::Null) out.set_null();
  if (kind == StringKind::PoolKey) throw FormatError("a string pool entry refers to the string pool");
}

}  // namespace nmprof::jfr
