#include "formats/jfr/reading/metadata_reader.h"

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/strings.h"

namespace nmprof::jfr {
namespace {

constexpr int kMaxElementDepth = 16;  // the tree is 5 levels deep; more means a corrupt record

struct Element {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string_view>> attributes;
  std::vector<Element> children;

  std::string_view attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return v;
    return {};
  }
};

class ElementParser {
 public:
  ElementParser(ByteReader& in, const std::vector<std::string>& strings) : in_(in), strings_(strings) {}

  Element parse(int depth) {
    if (depth > kMaxElementDepth) throw FormatError("metadata element tree nested too deeply");
    Element e;
    e.name = string();
    for (uint64_t n = count(); n > 0; n--) {
      std::string_view key = string();
      e.attributes.emplace_back(key, string());
    }
    for (uint64_t n = count(); n > 0; n--) e.children.push_back(parse(depth + 1));
    return e;
  }

 private:
  std::string_view string() {
    uint64_t index = in_.varint();
    if (index >= strings_.size())
      throw FormatError("metadata refers to string " + std::to_string(index) + " of " +
                        std::to_string(strings_.size()));
    return strings_[index];
  }
  uint64_t count() {
    uint64_t n = in_.varint();
    if (n > in_.remaining()) throw FormatError("metadata element count exceeds the record");
    return n;
  }

  ByteReader& in_;
  const std::vector<std::string>& strings_;
};

uint64_t number(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size())
    throw FormatError("metadata: bad " + std::string(what) + " \"" + std::string(text) + "\"");
  return v;
}

AnnotationDecl annotation(const Element& e) {
  AnnotationDecl a{number(e.attribute("class"), "annotation class"), {}};
  for (const auto& [k, v] : e.attributes)
    if (k != "class") a.values.emplace_back(k, v);
  return a;
}

FieldDecl field(const Element& e) {
  FieldDecl f{std::string(e.attribute("name")),
              number(e.attribute("class"), "field class"),
              e.attribute("constantPool") == "true",
              false,
              {}};
  std::string_view dimension = e.attribute("dimension");
  if (!dimension.empty() && dimension != "0") {
    if (dimension != "1") throw FormatError("metadata: unsupported array dimension " + std::string(dimension));
    f.array = true;
  }
  for (const auto& c : e.children)
    if (c.name == "annotation") f.annotations.push_back(annotation(c));
  return f;
}

TypeDecl type(const Element& e) {
  TypeDecl t{std::string(e.attribute("name")),
             number(e.attribute("id"), "type id"),
             std::string(e.attribute("superType")),
             e.attribute("simpleType") == "true",
             {},
             {}};
  for (const auto& c : e.children) {
    if (c.name == "field") t.fields.push_back(field(c));
    if (c.name == "annotation") t.annotations.push_back(annotation(c));
  }
  return t;
}

}  // namespace

Metadata read_metadata(std::span<const uint8_t> record) {
  ByteReader in(record);
  in.varint();  // size
  if (in.varint() != 0) throw FormatError("not a metadata record");
  in.varint();  // start time
  in.varint();  // duration
  in.varint();  // metadata id
  uint64_t string_count = in.varint();
  if (string_count > in.remaining()) throw FormatError("metadata string count exceeds the record");
  std::vector<std::string> strings(string_count);
  for (auto& s : strings) {
    uint64_t unused_key;
    if (read_string(in, s, unused_key) == StringKind::PoolKey)
      throw FormatError("metadata string refers to a constant pool");
  }
  Element root = ElementParser(in, strings).parse(0);

  Metadata metadata;
  for (const auto& section : root.children) {
    if (section.name != "metadata") continue;
    for (const auto& c : section.children)
      if (c.name == "class") metadata.add(type(c));
  }
  return metadata;
}

}  // namespace nmprof::jfr
