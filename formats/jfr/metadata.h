// A JFR type system (the metadata record of a chunk): declared types with their
// fields and annotations, encoded as the string table plus element tree of
// jfr-format.md section 6.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/jfr/writing/byte_buffer.h"

namespace nmprof::jfr {

struct AnnotationDecl {
  uint64_t type;                                            // id of the annotation type
  std::vector<std::pair<std::string, std::string>> values;  // "value", "value-0", ...
};

struct FieldDecl {
  std::string name;
  uint64_t type;
  bool constant_pool = false;
  bool array = false;
  std::vector<AnnotationDecl> annotations;
};

struct TypeDecl {
  std::string name;
  uint64_t id;
  std::string super_type;  // "jdk.jfr.Event", "java.lang.annotation.Annotation" or empty
  bool simple_type = false;
  std::vector<AnnotationDecl> annotations;
  std::vector<FieldDecl> fields;
};

class Metadata {
 public:
  TypeDecl& add(TypeDecl type) { return types_.emplace_back(std::move(type)); }
  const std::vector<TypeDecl>& types() const { return types_; }
  const TypeDecl* find(const std::string& name) const;

  // Appends the complete metadata record (size, type 0, ..., root element) to out.
  void encode(ByteBuffer& out, uint64_t start_ticks, uint64_t metadata_id) const {
    encode_record(out, start_ticks, metadata_id, encode_body());
  }
  // The record in two parts: its body (string table and element tree) is the same in
  // every chunk of a recording, and is encoded once.
  ByteBuffer encode_body() const;
  static void encode_record(ByteBuffer& out, uint64_t start_ticks, uint64_t metadata_id, const ByteBuffer& body);
  // A stable id derived from the declarations: equal layouts get equal ids, so
  // concatenated chunks from different processes never share an id with another layout.
  uint64_t fingerprint() const;

 private:
  std::vector<TypeDecl> types_;
};

}  // namespace nmprof::jfr
