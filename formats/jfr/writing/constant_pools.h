// Constant-pool entries collected for the next checkpoint record, one growing
// list per type (jfr-format.md section 8).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "formats/jfr/varint.h"
#include "formats/jfr/writing/byte_buffer.h"

namespace nmprof::jfr {

class ConstantPools {
 public:
  ConstantPools() = default;
  // Pre-creates the pools of `types` so that adding entries of those types never
  // allocates from the heap (the agent may do it inside a signal handler).
  explicit ConstantPools(std::initializer_list<uint64_t> types);

  // Starts a new entry of `type` and returns the buffer its key and value go into.
  // The reference stays valid until an entry of a type not seen before is added
  // (never, for the types given to the constructor).
  ByteBuffer& add_entry(uint64_t type);
  bool empty() const;
  // False when an entry could not grow (out of memory): its pool is incomplete.
  bool ok() const;
  void clear();
  // Appends one checkpoint record (type 1) with every non-empty pool.
  void encode_checkpoint(ByteBuffer& out, uint64_t start_ticks, int64_t delta) const;
  // The same record given piece by piece to write(data, size) (false stops it): its
  // head, then each pool's type, count and entries as they are, so that writing it
  // needs no buffer that could fail to grow. Returns the record's size, 0 if stopped.
  template <typename Write>
  uint64_t write_checkpoint(uint64_t start_ticks, int64_t delta, Write&& write) const;

 private:
  struct Pool {
    uint64_t type;
    uint64_t count = 0;
    ByteBuffer entries;
  };
  // The record's head, up to its pool count; `size`: the whole record's.
  size_t encode_head(uint8_t* out, uint64_t size, uint64_t start_ticks, int64_t delta) const;
  static size_t encode_pool_head(uint8_t* out, const Pool& p);

  static constexpr size_t kSizeLength = 5;  // a checkpoint's size, padded to be patched in place
  static constexpr size_t kMaxHead = kSizeLength + 5 * kMaxVarintLength + 1;
  std::vector<Pool> pools_;
};

template <typename Write>
uint64_t ConstantPools::write_checkpoint(uint64_t start_ticks, int64_t delta, Write&& write) const {
  uint8_t head[kMaxHead];
  uint8_t pool_head[2 * kMaxVarintLength];
  uint64_t size = encode_head(head, 0, start_ticks, delta);
  for (const auto& p : pools_)
    if (p.count) size += encode_pool_head(pool_head, p) + p.entries.size();
  if (!write(head, encode_head(head, size, start_ticks, delta))) return 0;
  for (const auto& p : pools_) {
    if (!p.count) continue;
    if (!write(pool_head, encode_pool_head(pool_head, p)) || !write(p.entries.data(), p.entries.size())) return 0;
  }
  return size;
}

}  // namespace nmprof::jfr
