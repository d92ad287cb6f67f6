// Constant-pool entries collected for the next checkpoint record, one growing
// list per type (jfr-format.md section 8).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

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
  void clear();
  // Appends one checkpoint record (type 1) with every non-empty pool.
  void encode_checkpoint(ByteBuffer& out, uint64_t start_ticks, int64_t delta) const;

 private:
  struct Pool {
    uint64_t type;
    uint64_t count = 0;
    ByteBuffer entries;
  };
  std::vector<Pool> pools_;
};

}  // namespace nmprof::jfr
