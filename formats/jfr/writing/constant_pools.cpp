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

void ConstantPools::clear() {
  for (auto& p : pools_) {
    p.count = 0;
    p.entries.clear();
  }
}

void ConstantPools::encode_checkpoint(ByteBuffer& out, uint64_t start_ticks, int64_t delta) const {
  constexpr size_t kSizeLength = 5;
  size_t start = out.size();
  size_t size_at = out.put_varint_placeholder(kSizeLength);
  out.put_varint(1);  // record type: checkpoint
  out.put_varint(start_ticks);
  out.put_varint(0);  // duration
  out.put_varint(static_cast<uint64_t>(delta));
  out.put_u8(1);  // checkpoint type: flush
  uint64_t non_empty = 0;
  for (const auto& p : pools_) non_empty += p.count ? 1 : 0;
  out.put_varint(non_empty);
  for (const auto& p : pools_) {
    if (!p.count) continue;
    out.put_varint(p.type);
    out.put_varint(p.count);
    out.put_bytes(p.entries.data(), p.entries.size());
  }
  out.patch_varint(size_at, out.size() - start, kSizeLength);
}

}  // namespace nmprof::jfr
