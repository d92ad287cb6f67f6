// Field numbers from profile.proto (google/pprof, package perftools.profiles).
#include "formats/pprof/pprof_profile.h"
#include "formats/pprof/protobuf.h"

namespace nmprof::pprof {
namespace {

enum ProfileField : uint32_t {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kFunction = 5,
  kStringTable = 6,
  kTimeNanos = 9,
  kDurationNanos = 10,
  kPeriodType = 11,
  kPeriod = 12,
  kComment = 13,
  kDefaultSampleType = 14,
};

ProtoMessage value_type(const ValueType& v, StringTable& strings) {
  ProtoMessage m;
  m.signed_field(1, strings.index(v.type));
  m.signed_field(2, strings.index(v.unit));
  return m;
}

ProtoMessage label(const Label& l, StringTable& strings) {
  ProtoMessage m;
  m.signed_field(1, strings.index(l.key));
  if (l.numeric) {
    m.signed_field(3, l.number);
    m.signed_field(4, strings.index(l.number_unit));
  } else {
    m.signed_field(2, strings.index(l.text));
  }
  return m;
}

ProtoMessage sample(const Sample& s, StringTable& strings) {
  ProtoMessage m;
  m.packed_field(1, s.location_ids);
  m.packed_field(2, s.values);
  for (const auto& l : s.labels) m.message_field(3, label(l, strings));
  return m;
}

ProtoMessage mapping(uint64_t id, const Mapping& map, StringTable& strings) {
  ProtoMessage m;
  m.varint_field(1, id);
  m.varint_field(2, map.memory_start);
  m.varint_field(3, map.memory_limit);
  m.varint_field(4, map.file_offset);
  m.signed_field(5, strings.index(map.filename));
  m.signed_field(6, strings.index(map.build_id));
  m.bool_field(7, map.has_functions);
  m.bool_field(8, map.has_filenames);
  m.bool_field(9, map.has_line_numbers);
  return m;
}

ProtoMessage location(uint64_t id, const Location& loc) {
  ProtoMessage m;
  m.varint_field(1, id);
  m.varint_field(2, loc.mapping_id);
  m.varint_field(3, loc.address);
  for (const auto& l : loc.lines) m.message_field(4, line_message(l));
  return m;
}

ProtoMessage function(uint64_t id, const Function& f, StringTable& strings) {
  ProtoMessage m;
  m.varint_field(1, id);
  m.signed_field(2, strings.index(f.name));
  m.signed_field(3, strings.index(f.system_name));
  m.signed_field(4, strings.index(f.filename));
  m.signed_field(5, f.start_line);
  return m;
}

}  // namespace

ProtoMessage line_message(const Line& line) {
  ProtoMessage m;
  m.varint_field(1, line.function_id);
  m.signed_field(2, line.line);
  return m;
}

std::string encode(const Profile& p) {
  StringTable strings;
  ProtoMessage out;
  for (const auto& t : p.sample_types) out.message_field(kSampleType, value_type(t, strings));
  for (const auto& s : p.samples) out.message_field(kSample, sample(s, strings));
  for (size_t i = 0; i < p.mappings.size(); i++) out.message_field(kMapping, mapping(i + 1, p.mappings[i], strings));
  for (size_t i = 0; i < p.locations.size(); i++) out.message_field(kLocation, location(i + 1, p.locations[i]));
  for (size_t i = 0; i < p.functions.size(); i++) out.message_field(kFunction, function(i + 1, p.functions[i], strings));
  out.signed_field(kTimeNanos, p.time_nanos);
  out.signed_field(kDurationNanos, p.duration_nanos);
  if (!p.period_type.type.empty()) out.message_field(kPeriodType, value_type(p.period_type, strings));
  out.signed_field(kPeriod, p.period);
  for (const auto& c : p.comments) out.signed_field(kComment, strings.index(c));
  out.signed_field(kDefaultSampleType, strings.index(p.default_sample_type));
  strings.write(out, kStringTable);  // last, as Go does: every string is known by now
  return out.bytes();
}

}  // namespace nmprof::pprof
