#include "formats/jfr/reading/type_system.h"

#include "formats/jfr/reading/byte_reader.h"

namespace nmprof::jfr {
namespace {

Encoding encoding_of(const TypeDecl& t) {
  static const std::pair<const char*, Encoding> primitives[] = {
      {"boolean", Encoding::Boolean}, {"byte", Encoding::Byte},     {"char", Encoding::Char},
      {"short", Encoding::Short},     {"int", Encoding::Int},       {"long", Encoding::Long},
      {"float", Encoding::Float},     {"double", Encoding::Double}, {"java.lang.String", Encoding::String}};
  if (!t.fields.empty()) return Encoding::Struct;
  for (const auto& [name, encoding] : primitives)
    if (t.name == name) return encoding;
  return Encoding::Struct;
}

}  // namespace

const Annotation* Field::annotation(std::string_view type_name) const {
  for (const auto& a : annotations)
    if (a.type_name == type_name) return &a;
  return nullptr;
}

int Type::field_index(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); i++)
    if (fields[i].name == field_name) return static_cast<int>(i);
  return -1;
}

TypeSystem::TypeSystem(const Metadata& metadata) {
  const auto& decls = metadata.types();
  types_.reserve(decls.size());  // pointers into types_ stay valid from here on
  for (const auto& d : decls) {
    Type& t = types_.emplace_back();
    t.id = d.id;
    t.name = d.name;
    t.super_type = d.super_type;
    t.simple_type = d.simple_type;
    t.encoding = encoding_of(d);
    by_id_.emplace(t.id, &t);
  }
  for (const auto& t : types_) by_name_.emplace(t.name, &t);

  auto type_of = [this](uint64_t id, const std::string& user) {
    const Type* t = find(id);
    if (!t) throw FormatError("metadata: type " + std::to_string(id) + " used by " + user + " is not declared");
    return t;
  };
  for (size_t i = 0; i < decls.size(); i++) {
    Type& t = types_[i];
    for (const auto& fd : decls[i].fields) {
      Field& f = t.fields.emplace_back();
      f.name = fd.name;
      f.type = type_of(fd.type, t.name + "." + fd.name);
      f.constant_pool = fd.constant_pool;
      f.array = fd.array;
      for (const auto& ad : fd.annotations) {
        const Type* at = find(ad.type);  // an undeclared annotation only loses its meaning
        if (!at) continue;
        Annotation& a = f.annotations.emplace_back(Annotation{at->name, {}});
        for (const auto& [key, value] : ad.values)
          if (key == "value") a.value = value;
      }
    }
  }
}

const Type* TypeSystem::find(uint64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const Type* TypeSystem::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace nmprof::jfr
