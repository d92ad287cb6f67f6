// The context attribute values samples refer to (java.lang.String pool entries):
// each distinct value gets a small id once and keeps it, so an event carries a key
// instead of the text. A thread's context holds the text (nmprof.h, the Java and
// PHP APIs write it without calling the agent), so values are looked up when a
// sample is taken. Without any lock: finding a known value only reads the table; a
// new value reserves an id, fills its entry and publishes it with a compare-and-swap
// into an empty slot, so threads adding values at once never wait for each other
// (two adding the same value: one id wins, the other stays unused). Entries never
// move or go away; a forked child keeps them. The table is bounded: past
// kMaxValues, values are not pooled (the caller writes them inline).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "include/nmprof.h"

namespace nmprof {

class AttributeValues {
 public:
  static constexpr size_t kMaxValues = 16384;
  static constexpr size_t kMaxLength = NMPROF_ATTRIBUTE_SIZE - 1;

  struct Entry {
    uint64_t hash;
    // The output generation whose writer was told about this value: the sampling
    // thread that first uses it in a generation lists it for the pools.
    std::atomic<uint32_t> listed_in;
    uint8_t length;
    char text[kMaxLength];

    std::string_view value() const { return {text, length}; }
  };

  AttributeValues() = default;
  ~AttributeValues();
  AttributeValues(const AttributeValues&) = delete;
  AttributeValues& operator=(const AttributeValues&) = delete;

  // The id (1-based) of `value` (1 to kMaxLength bytes), added when new; 0 when
  // the table is full or out of memory.
  uint32_t intern(std::string_view value);
  // An id intern() returned.
  Entry& entry(uint32_t id) const {
    return segments_[(id - 1) / kSegmentSize].load(std::memory_order_acquire)[(id - 1) % kSegmentSize];
  }
  size_t memory_bytes() const { return memory_bytes_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kSegmentSize = 512;
  static constexpr size_t kSegments = kMaxValues / kSegmentSize;
  static constexpr size_t kSlots = kMaxValues * 2;  // never more than half full: every probe ends

  static uint64_t hash_of(std::string_view value);
  Entry* new_entry(uint32_t id);
  std::atomic<uint32_t>* slots();

  std::atomic<std::atomic<uint32_t>*> slots_{nullptr};  // id or 0, made on the first value
  std::atomic<uint32_t> reserved_{0};                    // ids given out, used or not
  std::atomic<Entry*> segments_[kSegments] = {};
  std::atomic<size_t> memory_bytes_{0};
};

}  // namespace nmprof
