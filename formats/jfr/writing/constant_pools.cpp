#include "formats/jfr/writing/constant_pools.h"

namespace nmprof::jfr {

ConstantPools::ConstantPools(std::initializer_list<uint64_t> types) {
  pools_.reserve(types.size());
  for (uint64_t type : types) pools_.push_back(Pool{type, 0, {}});
}

ByteBuffer& ConstantPools::add_entry(uint64_t type) {
  for (auto& p : pools_) {
    if (p.type == type) {
      p.count++;
      return p.entries;
    }
  }
  Pool& p = pools_.emplace_back(Pool{type, 1, {}});
  return p.entries;
}

bool ConstantPools::empty() const {
  for (const auto& p : pools_)
    if (p.count) return false;
  return true;
}

bool ConstantPools::ok() const {
  for (const auto& p : pools_)
    if (!p.entries.ok()) return false;
  return true;
}

void ConstantPools::clear() {
  for (auto& p : pools_) {
    p.count = 0;
    p.entries.clear();
  }
}

void ConstantPools::encode_checkpoint(ByteBuffer& out, uint64_t start_ticks, int64_t delta) const {
  write_checkpoint(start_ticks, delta, [&out](const void* p, size_t n) {
    out.put_bytes(p, n);
    return true;
  });
}

size_t ConstantPools::encode_head(uint8_t* out, uint64_t size, uint64_t start_ticks, int64_t delta) const {
  encode_varint_padded(size, out, kSizeLength);
  size_t n = kSizeLength;
  n += encode_varint(1, out + n);  // record type: checkpoint
  n += encode_varint(start_ticks, out + n);
  n += encode_varint(0, out + n);  // duration
  n += encode_varint(static_cast<uint64_t>(delta), out + n);
  out[n++] = 1;  // checkpoint type: flush
  uint64_t non_empty = 0;
  for (const auto& p : pools_) non_empty += p.count ? 1 : 0;
  return n + encode_varint(non_empty, out + n);
}

size_t ConstantPools::encode_pool_head(uint8_t* out, const Pool& p) {
  size_t n = encode_varint(p.type, out);
  return n + encode_varint(p.count, out + n);
}

}  // namespace nmprof::jfr
