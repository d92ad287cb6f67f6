// Field numbers from opentelemetry/proto/{collector/profiles,profiles}/v1development,
// common/v1 and resource/v1 (third_party/opentelemetry-proto).
#include "cli/upload/otlp_encoder.h"

#include <map>
#include <tuple>

#include "formats/pprof/gzip.h"
#include "formats/pprof/protobuf.h"

namespace nmprof::upload {
namespace {

using pprof::ProtoMessage;
using pprof::StringTable;

enum DictionaryField : uint32_t {
  kMappingTable = 1,
  kLocationTable = 2,
  kFunctionTable = 3,
  kLinkTable = 4,
  kStringTable = 5,
  kAttributeTable = 6,
  kStackTable = 7,
};

// What profiles refer to by index; each table's element 0 is its zero value.
class Dictionary {
 public:
  explicit Dictionary(const pprof::Profile& profile) : profile_(profile) {}

  int64_t string(const std::string& s) { return strings_.index(s); }

  // A sample's attribute: the same key, value and unit share one entry.
  int64_t attribute(const pprof::Label& label) {
    auto key = std::make_tuple(label.key, label.numeric, label.text, label.number, label.number_unit);
    auto [it, added] = attributes_.try_emplace(key, static_cast<int64_t>(attribute_table_.size() + 1));
    if (added) {
      ProtoMessage entry;
      entry.signed_field(1, string(label.key));
      entry.message_field(2, any_value(label));
      if (label.numeric) entry.signed_field(3, string(label.number_unit));
      attribute_table_.push_back(entry);
    }
    return it->second;
  }

  int64_t stack(const std::vector<uint64_t>& locations) {
    auto [it, added] = stacks_.try_emplace(locations, static_cast<int64_t>(stack_table_.size() + 1));
    if (added) {
      ProtoMessage entry;
      entry.packed_field(1, locations);  // location i + 1 is pprof's location id i + 1
      stack_table_.push_back(entry);
    }
    return it->second;
  }

  static ProtoMessage any_value(const pprof::Label& label) {
    ProtoMessage value;
    if (label.numeric)
      value.signed_field(3, label.number);
    else
      value.bytes_field(1, label.text);
    return value;
  }

  ProtoMessage encode() {
    ProtoMessage out;
    // pprof's ids are 1-based positions: with the zero elements first, id = index.
    out.empty_field(kMappingTable);
    for (const auto& m : profile_.mappings) {
      ProtoMessage entry;
      entry.varint_field(1, m.memory_start);
      entry.varint_field(2, m.memory_limit);
      entry.varint_field(3, m.file_offset);
      entry.signed_field(4, string(m.filename));
      // Pyroscope reads a mapping's build id from this attribute (pkg/ingester/otlp/convert.go).
      if (!m.build_id.empty()) {
        int64_t build_id = attribute({"process.executable.build_id.gnu", m.build_id, 0, {}, false});
        entry.packed_field(5, std::span<const int64_t>(&build_id, 1));
      }
      out.element_field(kMappingTable, entry);
    }
    out.empty_field(kLocationTable);
    for (const auto& l : profile_.locations) {
      ProtoMessage entry;
      entry.varint_field(1, l.mapping_id);
      entry.varint_field(2, l.address);
      for (const auto& line : l.lines) entry.element_field(3, pprof::line_message(line));
      out.element_field(kLocationTable, entry);
    }
    out.empty_field(kFunctionTable);
    for (const auto& f : profile_.functions) {
      ProtoMessage entry;
      entry.signed_field(1, string(f.name));
      entry.signed_field(2, string(f.system_name));
      entry.signed_field(3, string(f.filename));
      entry.signed_field(4, f.start_line);
      out.element_field(kFunctionTable, entry);
    }
    // No sample links to a trace (nmprof has span ids, not trace ids): element 0 only,
    // with the 16 and 8 zero bytes the specification asks of it.
    ProtoMessage no_link;
    no_link.bytes_field(1, std::string(16, '\0'));
    no_link.bytes_field(2, std::string(8, '\0'));
    out.element_field(kLinkTable, no_link);
    out.empty_field(kAttributeTable);
    for (const auto& a : attribute_table_) out.element_field(kAttributeTable, a);
    out.empty_field(kStackTable);
    for (const auto& s : stack_table_) out.element_field(kStackTable, s);
    strings_.write(out, kStringTable);  // last: every string is known by now
    return out;
  }

 private:
  const pprof::Profile& profile_;
  StringTable strings_;
  std::map<std::tuple<std::string, bool, std::string, int64_t, std::string>, int64_t> attributes_;
  std::vector<ProtoMessage> attribute_table_;  // from index 1
  std::map<std::vector<uint64_t>, int64_t> stacks_;
  std::vector<ProtoMessage> stack_table_;  // from index 1
};

ProtoMessage value_type(const pprof::ValueType& type, Dictionary& dictionary) {
  ProtoMessage m;
  m.signed_field(1, dictionary.string(type.type));
  m.signed_field(2, dictionary.string(type.unit));
  return m;
}

bool same_label(const pprof::Label& a, const pprof::Label& b) {
  return a.key == b.key && a.numeric == b.numeric && a.text == b.text && a.number == b.number;
}

// The profile of sample type `type`: the samples with a value of that type.
ProtoMessage one_type(const pprof::Profile& profile, size_t type, const OtlpSource& source, Dictionary& dictionary) {
  ProtoMessage out;
  out.message_field(1, value_type(profile.sample_types[type], dictionary));
  for (const auto& s : profile.samples) {
    if (type >= s.values.size() || s.values[type] == 0) continue;
    ProtoMessage sample;
    sample.signed_field(1, dictionary.stack(s.location_ids));
    std::vector<int64_t> attributes;
    for (const auto& label : s.labels) {
      // The tags are the resource's already.
      bool of_resource = false;
      for (const auto& r : source.resource) of_resource = of_resource || same_label(r, label);
      if (!of_resource) attributes.push_back(dictionary.attribute(label));
    }
    sample.packed_field(2, attributes);
    sample.packed_field(4, std::span<const int64_t>(&s.values[type], 1));
    out.element_field(2, sample);
  }
  out.fixed64_field(3, static_cast<uint64_t>(profile.time_nanos));
  out.varint_field(4, static_cast<uint64_t>(profile.duration_nanos));
  if (!profile.period_type.type.empty()) out.message_field(5, value_type(profile.period_type, dictionary));
  out.signed_field(6, profile.period);
  return out;
}

}  // namespace

std::string encode_otlp(const pprof::Profile& profile, const OtlpSource& source) {
  Dictionary dictionary(profile);
  ProtoMessage scope_profiles;
  ProtoMessage scope;
  scope.bytes_field(1, source.scope_name);
  scope.bytes_field(2, source.scope_version);
  scope_profiles.message_field(1, scope);
  for (size_t type = 0; type < profile.sample_types.size(); type++)
    scope_profiles.element_field(2, one_type(profile, type, source, dictionary));

  ProtoMessage resource;
  for (const auto& attribute : source.resource) {
    ProtoMessage key_value;
    key_value.bytes_field(1, attribute.key);
    key_value.message_field(2, Dictionary::any_value(attribute));
    resource.element_field(1, key_value);
  }
  ProtoMessage resource_profiles;
  resource_profiles.message_field(1, resource);
  resource_profiles.element_field(2, scope_profiles);

  ProtoMessage request;
  request.element_field(1, resource_profiles);
  request.message_field(2, dictionary.encode());
  return request.bytes();
}

HttpRequest otlp_request(const Url& endpoint, const std::string& encoded) {
  return {endpoint.text(), "application/x-protobuf", "gzip", pprof::gzip(encoded)};
}

}  // namespace nmprof::upload
