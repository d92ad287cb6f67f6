// Which sampled allocations are still live, kept up to date while a recording is
// read so that no allocation needs to be remembered once it is freed. Pairing is
// done as if every event of a process were sorted by time (at equal times
// allocations first, then in file order): a free frees the latest allocation at its
// address not yet freed; a free with none is counted and otherwise ignored.
//
// A file need not hold its events in time order (the agent writes each thread's
// events from one of several buffers). The reader says, per process, from which
// time on events may still come (hold_from): the events before that are paired in
// time order, the later ones wait. With no such word from the reader, events are
// paired as they come.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "profile/move.h"

namespace nmprof::profile {

class LiveTracker {
 public:
  struct Block {
    uint32_t allocation = 0;  // the Allocation it was summed into
    float weight = 1;
    int64_t time_nanos = 0;
    uint64_t size = 0;
  };
  // What pairing does, in time order: a block becomes live (no freed_at), or a live
  // block is freed at freed_at.
  using Changes = std::function<void(const Block& block, std::optional<int64_t> freed_at)>;

  void allocated(uint32_t process, uint64_t address, const Block& block, const Changes& changes);
  // moved: a realloc moved (or resized) the block, which lives on there, as a block
  // that became live then: its old self is freed, its new self allocated.
  // in_later_chunk: the free is in a chunk that began after its process's recording
  // did (a looping recording's), where a free of a block never seen is one of an
  // earlier chunk's blocks.
  void freed(uint32_t process, uint64_t address, int64_t time_nanos, const Changes& changes,
             const std::optional<Move>& moved = {}, bool in_later_chunk = false);
  // No event of `process` older than `time_nanos` is still to come.
  void hold_from(uint32_t process, int64_t time_nanos, const Changes& changes);
  // Every event is in: pairs all that waits (and pairs events as they come from now on).
  void settle(const Changes& changes);
  // `process` ended at `time_nanos`: its live blocks are freed then (after settle()).
  void ended(uint32_t process, int64_t time_nanos, const Changes& changes);

  // Files read one after another (the chunks of a looping recording). A block live
  // when a file begins is, for as long as it lives, restated by each later file (a
  // profiler.LiveMalloc at its address), or freed in it.
  void begin_file();
  // A block the file restates: whether it is live already (else it is new to the reader).
  bool restate(uint32_t process, uint64_t address);
  // The file ended: the blocks of `processes` live when it began that it neither freed
  // nor restated were freed in a file not read (a chunk missing), at `time_nanos`.
  void end_file(const std::vector<uint32_t>& processes, int64_t time_nanos, const Changes& changes);

  uint64_t matched_frees() const { return matched_; }
  uint64_t unmatched_frees() const { return unmatched_; }
  // Unmatched frees in a later chunk (see freed): of blocks of earlier chunks.
  uint64_t frees_of_earlier_chunks() const { return of_earlier_chunks_; }
  // The live blocks, as visit(process, block) (after settle(): of the events paired so far).
  template <class Visit>
  void for_each_live(Visit&& visit) const {
    for (const auto& [where, block] : latest_) visit(where.process, block);
    for (const auto& [where, blocks] : earlier_)
      for (const Block& block : blocks) visit(where.process, block);
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
  // An allocation or a free waiting to be paired.
  struct Event {
    int64_t time_nanos;
    uint64_t order;  // frees after allocations at equal times (top bit), then arrival
    uint64_t address;
    Block block;  // of an allocation; of a move, its new size and weight
    uint64_t moved_to = 0;
    bool operator<(const Event& o) const {
      return time_nanos != o.time_nanos ? time_nanos < o.time_nanos : order < o.order;
    }
  };
  static constexpr uint64_t kFree = 1ull << 63;
  static constexpr uint64_t kInLaterChunk = 1ull << 62;  // of a free (see freed)
  // The events of one process that wait, and from when on they must.
  struct Waiting {
    std::vector<Event> events;
    int64_t hold_from = INT64_MAX;  // none: events are paired as they come
    size_t sort_at = kFirstSort;    // pairs what it can once this many wait
  };
  static constexpr size_t kFirstSort = 4096;

  void add(uint32_t process, const Event& event, const Changes& changes);
  // Pairs the waiting events of `process` older than its hold_from, in time order.
  void pair_older(uint32_t process, Waiting& waiting, const Changes& changes);
  void pair(uint32_t process, const Event& event, const Changes& changes);
  void become_live(uint32_t process, uint64_t address, const Block& block, const Changes& changes);
  // The latest block at `where` is freed at `time_nanos`; a block it hid takes its place.
  Block release(std::unordered_map<Where, Block, Hash>::iterator latest, int64_t time_nanos, const Changes& changes);

  std::unordered_map<uint32_t, Waiting> waiting_;  // by process
  uint64_t arrivals_ = 0;
  // The latest live block per address; the blocks it hid (allocated again at an
  // address still live: a free the recording missed), latest last.
  std::unordered_map<Where, Block, Hash> latest_;
  std::unordered_map<Where, std::vector<Block>, Hash> earlier_;
  // The blocks live when the file being read began, by where they are, with their time.
  std::unordered_map<Where, int64_t, Hash> at_file_start_;
  uint64_t matched_ = 0;
  uint64_t unmatched_ = 0;
  uint64_t of_earlier_chunks_ = 0;
};

}  // namespace nmprof::profile
