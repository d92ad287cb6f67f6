// Where each constant-pool entry of a chunk starts: (type id, key) -> offset of the
// entry's value in the chunk. Values are decoded only when someone asks for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace nmprof::jfr {

class PoolIndex {
 public:
  // A key seen again keeps its first value (the JDK repeats entries across checkpoints).
  void add(uint64_t type_id, uint64_t key, size_t offset) { pools_[type_id].try_emplace(key, offset); }

  std::optional<size_t> find(uint64_t type_id, uint64_t key) const {
    auto pool = pools_.find(type_id);
    if (pool == pools_.end()) return std::nullopt;
    auto entry = pool->second.find(key);
    if (entry == pool->second.end()) return std::nullopt;
    return entry->second;
  }

 private:
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, size_t>> pools_;
};

}  // namespace nmprof::jfr
