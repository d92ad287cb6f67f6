// Protocol buffer encoding of the few wire types profile.proto and OTLP's
// profiles.proto use: varints, fixed64 and length-delimited fields (strings, embedded
// messages, packed repeated integers), and the string table both index into.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nmprof::pprof {

class ProtoMessage {
 public:
  // Fields with default values (0, "", empty) are left out, as proto3 does.
  void varint_field(uint32_t field, uint64_t value);
  void signed_field(uint32_t field, int64_t value) { varint_field(field, static_cast<uint64_t>(value)); }
  void bool_field(uint32_t field, bool value) { varint_field(field, value ? 1 : 0); }
  void bytes_field(uint32_t field, std::string_view bytes);
  void message_field(uint32_t field, const ProtoMessage& message) { bytes_field(field, message.bytes_); }
  // An element of a repeated message field, written even when empty: its position is
  // what others refer to it by.
  void element_field(uint32_t field, const ProtoMessage& message);
  void fixed64_field(uint32_t field, uint64_t value);
  void packed_field(uint32_t field, std::span<const uint64_t> values);
  void packed_field(uint32_t field, std::span<const int64_t> values);
  // A bytes or message field even when empty: string_table[0] must be present.
  void empty_field(uint32_t field);

  const std::string& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  void key(uint32_t field, int wire_type);
  void varint(uint64_t value);

  std::string bytes_;
};

// Strings by index, index 0 being "", which every unset string field refers to.
class StringTable {
 public:
  StringTable() { strings_.emplace_back(); }

  int64_t index(const std::string& s);
  // Every string as an element of the repeated string field `field`, "" first.
  void write(ProtoMessage& message, uint32_t field) const;

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t> indexes_;
};

}  // namespace nmprof::pprof
