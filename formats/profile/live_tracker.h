// Which sampled allocations are still live, kept up to date while a recording is
// read so that no allocation needs to be remembered once it is freed. A free frees
// the latest allocation at its address in its process made at or before it (at equal
// times the allocation comes first). Events may come out of time order: a free met
// before its allocation waits for it; one no allocation ever claims stays unmatched.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace nmprof::profile {

class LiveTracker {
 public:
  struct Block {
    uint32_t allocation = 0;  // the Allocation it was summed into
    float weight = 1;
    int64_t time_nanos = 0;
    uint64_t size = 0;
  };

  // Returns whether the block is live (false: a free met earlier took it).
  bool allocated(uint32_t process, uint64_t address, const Block& block);
  // The block the free frees, if any.
  std::optional<Block> freed(uint32_t process, uint64_t address, int64_t time_nanos);

  uint64_t matched_frees() const { return matched_; }
  uint64_t unmatched_frees() const { return waiting_frees_.size(); }
  template <class Visit>
  void for_each_live(Visit&& visit) const {
    for (const auto& [where, block] : latest_) visit(block);
    for (const auto& [where, block] : earlier_) visit(block);
  }

 private:
  struct Where {
    uint64_t address;
    uint32_t process;
    bool operator==(const Where&) const = default;
  };
  struct Hash {
    size_t operator()(const Where& w) const { return w.address * 0x9e3779b97f4a7c15ull ^ w.process; }
  };
  // The latest live block per address; blocks an address had live before it was
  // allocated again (a free the recording missed) wait in earlier_.
  std::unordered_map<Where, Block, Hash> latest_;
  std::unordered_multimap<Where, Block, Hash> earlier_;
  std::unordered_multimap<Where, int64_t, Hash> waiting_frees_;
  uint64_t matched_ = 0;
};

}  // namespace nmprof::profile
