#include "formats/pprof/protobuf.h"

#include <vector>

namespace nmprof::pprof {
namespace {

constexpr int kVarint = 0;
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

}  // namespace nmprof::pprof
