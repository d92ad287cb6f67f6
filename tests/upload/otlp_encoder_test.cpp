// The OTLP encoding, read back field by field with the numbers of the vendored
// profiles.proto (third_party/opentelemetry-proto; the e2e tests decode it with
// protoc): a Profile per sample type sharing one dictionary whose tables start with
// their zero element, the resource's attributes, and samples' labels as attributes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli/upload/otlp_encoder.h"

namespace nmprof::upload {
namespace {

// A decoded message: each field's values in order (varints and fixed64 as numbers,
// length-delimited ones as bytes).
struct Fields {
  std::multimap<uint32_t, uint64_t> numbers;
  std::multimap<uint32_t, std::string> bytes;

  std::vector<std::string> all(uint32_t field) const {
    std::vector<std::string> out;
    for (auto [it, end] = bytes.equal_range(field); it != end; ++it) out.push_back(it->second);
    return out;
  }
  std::string one(uint32_t field) const {
    auto values = all(field);
    EXPECT_EQ(values.size(), 1u) << "field " << field;
    return values.empty() ? "" : values[0];
  }
  uint64_t number(uint32_t field) const {
    auto it = numbers.find(field);
    return it == numbers.end() ? 0 : it->second;
  }
};

uint64_t varint(const std::string& s, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < s.size(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(s[at++]);
    value |= uint64_t{byte & 0x7fu} << shift;
    if (byte < 0x80) break;
  }
  return value;
}

Fields decode(const std::string& s) {
  Fields f;
  for (size_t at = 0; at < s.size();) {
    uint64_t key = varint(s, at);
    uint32_t field = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0: f.numbers.emplace(field, varint(s, at)); break;
      case 1: {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
        at += 8;
        f.numbers.emplace(field, v);
        break;
      }
      case 2: {
        size_t size = varint(s, at);
        f.bytes.emplace(field, s.substr(at, size));
        at += size;
        break;
      }
      default: ADD_FAILURE() << "wire type " << (key & 7); return f;
    }
  }
  return f;
}

std::vector<uint64_t> packed(const std::string& s) {
  std::vector<uint64_t> values;
  for (size_t at = 0; at < s.size();) values.push_back(varint(s, at));
  return values;
}

pprof::Profile heap_profile() {
  pprof::Profile p;
  p.sample_types = {
      {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  p.mappings.push_back({0, 0, 0, "/usr/bin/app", "abc123", true, false, false});
  p.functions = {{"malloc", "malloc", "", 0}, {"main", "main", "app.c", 0}};
  p.locations = {{1, 0x10, {{1, 0}}}, {1, 0x20, {{2, 42}}}};
  p.samples.push_back(
      {{1, 2}, {3, 3000, 1, 1000}, {{"span_id", "77", 0, {}, false}, {"bytes", {}, 1000, "bytes", true}}});
  p.samples.push_back({{2}, {5, 500, 0, 0}, {{"env", "prod", 0, {}, false}}});
  p.time_nanos = 1'700'000'000'000'000'000;
  p.duration_nanos = 60'000'000'000;
  p.period_type = {"space", "bytes"};
  p.period = 524288;
  return p;
}

OtlpSource source() {
  return {{{"service.name", "shop", 0, {}, false}, {"process.pid", {}, 4123, {}, true}, {"env", "prod", 0, {}, false}},
          "nmprof",
          "1.0"};
}

TEST(OtlpEncoder, WritesOneProfilePerSampleTypeOverOneDictionary) {
  Fields request = decode(encode_otlp(heap_profile(), source()));
  Fields dictionary = decode(request.one(2));
  std::vector<std::string> strings = dictionary.all(5);
  ASSERT_FALSE(strings.empty());
  EXPECT_EQ(strings[0], "");
  auto text = [&](uint64_t index) { return index < strings.size() ? strings[index] : "<out of range>"; };

  Fields resource_profiles = decode(request.one(1));
  Fields scope_profiles = decode(resource_profiles.one(2));
  Fields scope = decode(scope_profiles.one(1));
  EXPECT_EQ(scope.one(1), "nmprof");
  EXPECT_EQ(scope.one(2), "1.0");
  std::vector<std::string> profiles = scope_profiles.all(2);
  ASSERT_EQ(profiles.size(), 4u);
  std::vector<std::string> types;
  std::vector<uint64_t> sample_counts;
  for (const std::string& bytes : profiles) {
    Fields profile = decode(bytes);
    Fields type = decode(profile.one(1));
    types.push_back(text(type.number(1)) + "/" + text(type.number(2)));
    sample_counts.push_back(profile.all(2).size());
    EXPECT_EQ(profile.number(3), 1'700'000'000'000'000'000u);  // fixed64 time_unix_nano
    EXPECT_EQ(profile.number(4), 60'000'000'000u);
    EXPECT_EQ(profile.number(6), 524288u);
    Fields period_type = decode(profile.one(5));
    EXPECT_EQ(text(period_type.number(1)), "space");
  }
  EXPECT_EQ(types, (std::vector<std::string>{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                                             "inuse_space/bytes"}));
  EXPECT_EQ(sample_counts, (std::vector<uint64_t>{2, 2, 1, 1}));  // a zero value is no sample

  // Every table starts with its zero element; pprof's ids are the indexes.
  auto mappings = dictionary.all(1), locations = dictionary.all(2), functions = dictionary.all(3);
  auto links = dictionary.all(4), attributes = dictionary.all(6), stacks = dictionary.all(7);
  ASSERT_EQ(mappings.size(), 2u);
  EXPECT_EQ(mappings[0], "");
  EXPECT_EQ(text(decode(mappings[1]).number(4)), "/usr/bin/app");
  ASSERT_EQ(locations.size(), 3u);
  EXPECT_EQ(locations[0], "");
  Fields main_location = decode(locations[2]);
  EXPECT_EQ(main_location.number(1), 1u);
  EXPECT_EQ(main_location.number(2), 0x20u);
  Fields line = decode(main_location.one(3));
  EXPECT_EQ(text(decode(functions[line.number(1)]).number(1)), "main");
  EXPECT_EQ(line.number(2), 42u);
  ASSERT_EQ(functions.size(), 3u);
  EXPECT_EQ(functions[0], "");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(decode(links[0]).one(1), std::string(16, '\0'));
  EXPECT_EQ(decode(links[0]).one(2), std::string(8, '\0'));
  ASSERT_GE(attributes.size(), 1u);
  EXPECT_EQ(attributes[0], "");
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_EQ(stacks[0], "");
  EXPECT_EQ(packed(decode(stacks[1]).one(1)), (std::vector<uint64_t>{1, 2}));

  // The first sample of alloc_space: its stack, its value, its labels as attributes
  // (not the tag the resource has already).
  Fields sample = decode(decode(profiles[1]).all(2)[0]);
  EXPECT_EQ(sample.number(1), 1u);
  EXPECT_EQ(packed(sample.one(4)), (std::vector<uint64_t>{3000}));
  std::map<std::string, std::string> labels;
  for (uint64_t index : packed(sample.one(2))) {
    Fields attribute = decode(attributes.at(index));
    Fields value = decode(attribute.one(2));
    labels[text(attribute.number(1))] =
        value.bytes.count(1) ? value.one(1) : std::to_string(value.number(3)) + " " + text(attribute.number(3));
  }
  EXPECT_EQ(labels, (std::map<std::string, std::string>{{"span_id", "77"}, {"bytes", "1000 bytes"}}));
  Fields env_sample = decode(decode(profiles[1]).all(2)[1]);
  EXPECT_EQ(env_sample.bytes.count(2), 0u);  // env=prod: the resource's

  // The mapping's build id, where Pyroscope looks for it.
  Fields build_id = decode(attributes.at(packed(decode(mappings[1]).one(5)).at(0)));
  EXPECT_EQ(text(build_id.number(1)), "process.executable.build_id.gnu");
  EXPECT_EQ(decode(build_id.one(2)).one(1), "abc123");
}

TEST(OtlpEncoder, ResourceAttributesAreStringsAndIntegers) {
  Fields request = decode(encode_otlp(heap_profile(), source()));
  Fields resource = decode(decode(request.one(1)).one(1));
  std::map<std::string, std::string> attributes;
  for (const std::string& kv : resource.all(1)) {
    Fields key_value = decode(kv);
    Fields value = decode(key_value.one(2));
    attributes[key_value.one(1)] = value.bytes.count(1) ? value.one(1) : "int " + std::to_string(value.number(3));
  }
  EXPECT_EQ(attributes, (std::map<std::string, std::string>{
                            {"service.name", "shop"}, {"process.pid", "int 4123"}, {"env", "prod"}}));
}

TEST(OtlpEncoder, TheRequestIsGzippedProtobuf) {
  Url endpoint{"http", "collector:4318", "/v1development/profiles"};
  HttpRequest r = otlp_request(endpoint, "abc");
  EXPECT_EQ(r.url, "http://collector:4318/v1development/profiles");
  EXPECT_EQ(r.content_type, "application/x-protobuf");
  EXPECT_EQ(r.content_encoding, "gzip");
  EXPECT_EQ(r.body.substr(0, 2), "\x1f\x8b");
}

}  // namespace
}  // namespace nmprof::upload
