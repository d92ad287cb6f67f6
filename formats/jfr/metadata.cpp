#include "formats/jfr/metadata.h"

#include <string_view>
#include <unordered_map>

namespace nmprof::jfr {
namespace {

// An element of the metadata tree before encoding; names and values stay strings
// until the string table is built.
struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<Element> children;
};

Element annotation_element(const AnnotationDecl& a) {
  Element e{"annotation", {{"class", std::to_string(a.type)}}, {}};
  for (const auto& v : a.values) e.attributes.push_back(v);
  return e;
}

Element type_element(const TypeDecl& t) {
  Element e{"class", {{"name", t.name}}, {}};
  if (!t.super_type.empty()) e.attributes.emplace_back("superType", t.super_type);
  if (t.simple_type) e.attributes.emplace_back("simpleType", "true");
  e.attributes.emplace_back("id", std::to_string(t.id));
  for (const auto& a : t.annotations) e.children.push_back(annotation_element(a));
  for (const auto& f : t.fields) {
    Element field{"field", {{"name", f.name}, {"class", std::to_string(f.type)}}, {}};
    if (f.constant_pool) field.attributes.emplace_back("constantPool", "true");
    if (f.array) field.attributes.emplace_back("dimension", "1");
    for (const auto& a : f.annotations) field.children.push_back(annotation_element(a));
    e.children.push_back(std::move(field));
  }
  return e;
}

// Names and values by their index in the record's string table. Views into the
// element tree, which outlives the table.
class StringTable {
 public:
  StringTable() { indexes_.reserve(1024); }
  uint64_t index(std::string_view s) {
    auto [it, inserted] = indexes_.try_emplace(s, strings_.size());
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  void collect(const Element& e) {
    index(e.name);
    for (const auto& [k, v] : e.attributes) {
      index(k);
      index(v);
    }
    for (const auto& c : e.children) collect(c);
  }
  const std::vector<std::string_view>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string_view, uint64_t> indexes_;
  std::vector<std::string_view> strings_;
};

void encode_element(ByteBuffer& out, StringTable& table, const Element& e) {
  out.put_varint(table.index(e.name));
  out.put_varint(e.attributes.size());
  for (const auto& [k, v] : e.attributes) {
    out.put_varint(table.index(k));
    out.put_varint(table.index(v));
  }
  out.put_varint(e.children.size());
  for (const auto& c : e.children) encode_element(out, table, c);
}

Element root_element(const std::vector<TypeDecl>& types) {
  Element root{"root", {}, {}};
  // Moved in: a braced list of children would copy the whole tree.
  root.children.push_back(Element{"metadata", {}, {}});
  for (const auto& t : types) root.children.back().children.push_back(type_element(t));
  root.children.push_back(Element{"region", {{"locale", "en_US"}, {"gmtOffset", "0"}}, {}});
  return root;
}

}  // namespace

const TypeDecl* Metadata::find(const std::string& name) const {
  for (const auto& t : types_)
    if (t.name == name) return &t;
  return nullptr;
}

ByteBuffer Metadata::encode_body() const {
  Element root = root_element(types_);
  StringTable table;
  table.collect(root);
  ByteBuffer body;
  body.put_varint(table.strings().size());
  for (const auto& s : table.strings()) body.put_string(s);
  encode_element(body, table, root);
  return body;
}

void Metadata::encode_record(ByteBuffer& out, uint64_t start_ticks, uint64_t metadata_id, const ByteBuffer& body) {
  constexpr size_t kSizeLength = 5;  // patched once the record is complete
  size_t start = out.size();
  size_t size_at = out.put_varint_placeholder(kSizeLength);
  out.put_varint(0);  // record type: metadata
  out.put_varint(start_ticks);
  out.put_varint(0);  // duration
  out.put_varint(metadata_id);
  out.put_bytes(body.data(), body.size());
  out.patch_varint(size_at, out.size() - start, kSizeLength);
}

uint64_t Metadata::fingerprint() const {
  // FNV-1a over the declarations; kept below 2^31 like other producers' ids.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  for (const auto& t : types_) {
    mix(t.name);
    mix(std::to_string(t.id));
    for (const auto& f : t.fields) {
      mix(f.name);
      mix(std::to_string(f.type));
      mix(f.constant_pool ? "cp" : "");
      mix(f.array ? "[]" : "");
    }
  }
  return (h % 0x7ffffff0ull) + 2;
}

}  // namespace nmprof::jfr
