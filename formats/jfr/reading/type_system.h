// A chunk's types ready for decoding: field types resolved to pointers and each
// type's wire encoding decided (jfr-format.md section 7). Built from the chunk's own
// metadata; ids mean nothing outside that chunk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/jfr/metadata.h"

namespace nmprof::jfr {

enum class Encoding : uint8_t { Boolean, Byte, Char, Short, Int, Long, Float, Double, String, Struct };

struct Type;

struct Annotation {
  std::string type_name;  // e.g. "jdk.jfr.Label"
  std::string value;      // its "value" attribute, empty if it has none
};

struct Field {
  std::string name;
  const Type* type = nullptr;
  bool constant_pool = false;
  bool array = false;
  std::vector<Annotation> annotations;

  // The annotation of that type, or null.
  const Annotation* annotation(std::string_view type_name) const;
};

struct Type {
  uint64_t id = 0;
  std::string name;
  std::string super_type;
  bool simple_type = false;
  Encoding encoding = Encoding::Struct;
  std::vector<Field> fields;

  bool is_event() const { return super_type == "jdk.jfr.Event"; }
  // Index of the field with that name, or -1.
  int field_index(std::string_view field_name) const;
};

class TypeSystem {
 public:
  TypeSystem() = default;
  // Throws FormatError when a field refers to an undeclared type.
  explicit TypeSystem(const Metadata& metadata);
  TypeSystem(TypeSystem&&) = default;
  TypeSystem& operator=(TypeSystem&&) = default;
  TypeSystem(const TypeSystem&) = delete;  // types point into each other
  TypeSystem& operator=(const TypeSystem&) = delete;

  const Type* find(uint64_t id) const;
  const Type* find(std::string_view name) const;
  const std::vector<Type>& types() const { return types_; }

 private:
  std::vector<Type> types_;
  std::unordered_map<uint64_t, const Type*> by_id_;
  std::unordered_map<std::string_view, const Type*> by_name_;
};

}  // namespace nmprof::jfr
