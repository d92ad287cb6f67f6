#include "formats/pprof/protobuf.h"

#include <vector>

namespace nmprof::pprof {
namespace {

constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;

}  // namespace

void ProtoMessage::varint(uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void ProtoMessage::key(uint32_t field, int wire_type) { varint(uint64_t{field} << 3 | static_cast<uint64_t>(wire_type)); }

void ProtoMessage::varint_field(uint32_t field, uint64_t value) {
  if (value == 0) return;
  key(field, kVarint);
  varint(value);
}

void ProtoMessage::bytes_field(uint32_t field, std::string_view bytes) {
  if (bytes.empty()) return;
  key(field, kLengthDelimited);
  varint(bytes.size());
  bytes_.append(bytes);
}

void ProtoMessage::element_field(uint32_t field, const ProtoMessage& message) {
  key(field, kLengthDelimited);
  varint(message.bytes_.size());
  bytes_.append(message.bytes_);
}

void ProtoMessage::fixed64_field(uint32_t field, uint64_t value) {
  if (value == 0) return;
  key(field, kFixed64);
  for (int i = 0; i < 8; i++) bytes_.push_back(static_cast<char>(value >> (8 * i)));  // little-endian
}

void ProtoMessage::empty_field(uint32_t field) {
  key(field, kLengthDelimited);
  varint(0);
}

void ProtoMessage::packed_field(uint32_t field, std::span<const uint64_t> values) {
  if (values.empty()) return;
  ProtoMessage payload;
  for (uint64_t v : values) payload.varint(v);
  // Written even when all values are 0: a sample has exactly one value per type.
  key(field, kLengthDelimited);
  varint(payload.bytes_.size());
  bytes_.append(payload.bytes_);
}

void ProtoMessage::packed_field(uint32_t field, std::span<const int64_t> values) {
  // int64 (not sint64): a negative value is its two's complement, 10 bytes long.
  std::vector<uint64_t> as_unsigned(values.begin(), values.end());
  packed_field(field, as_unsigned);
}

int64_t StringTable::index(const std::string& s) {
  if (s.empty()) return 0;
  auto [it, added] = indexes_.try_emplace(s, static_cast<int64_t>(strings_.size()));
  if (added) strings_.push_back(s);
  return it->second;
}

void StringTable::write(ProtoMessage& message, uint32_t field) const {
  message.empty_field(field);
  for (size_t i = 1; i < strings_.size(); i++) message.bytes_field(field, strings_[i]);
}

}  // namespace nmprof::pprof
