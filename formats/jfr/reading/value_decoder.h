// Decodes and skips values by their metadata (jfr-format.md section 7) within one
// chunk, resolving string-pool references (string encoding 2) on the way.
#pragma once

#include <cstdint>
#include <span>

#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/pool_index.h"
#include "formats/jfr/reading/type_system.h"
#include "formats/jfr/reading/value.h"

namespace nmprof::jfr {

class ValueDecoder {
 public:
  ValueDecoder(std::span<const uint8_t> chunk, const TypeSystem& types, const PoolIndex& pools);

  // A field's value as it appears in an event or struct.
  void read(const Field& field, ByteReader& in, Value& out) const;
  void skip(const Field& field, ByteReader& in) const;
  // A value of `type` itself, as a constant-pool entry holds it.
  void read_value(const Type& type, ByteReader& in, Value& out) const { read_inline(type, in, out, 0); }
  void skip_value(const Type& type, ByteReader& in) const { skip_inline(type, in, 0); }
  // The pool entry of `type` with `key`; null when the chunk has none.
  Value entry(const Type& type, uint64_t key) const;

 private:
  void read_field(const Field& field, ByteReader& in, Value& out, int depth) const;
  void skip_field(const Field& field, ByteReader& in, int depth) const;
  void read_inline(const Type& type, ByteReader& in, Value& out, int depth) const;
  void skip_inline(const Type& type, ByteReader& in, int depth) const;
  void read_pooled_string(uint64_t key, Value& out) const;

  std::span<const uint8_t> chunk_;
  const PoolIndex& pools_;
  const Type* string_type_;
};

}  // namespace nmprof::jfr
