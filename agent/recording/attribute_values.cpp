#include "agent/recording/attribute_values.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace nmprof {
namespace {

bool same(const AttributeValues::Entry& e, std::string_view value, uint64_t hash) {
  return e.hash == hash && e.value() == value;
}

}  // namespace

AttributeValues::~AttributeValues() {
  for (auto& segment : segments_) delete[] segment.load(std::memory_order_relaxed);
  free(slots_.load(std::memory_order_relaxed));
}

uint64_t AttributeValues::hash_of(std::string_view value) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ value.size();
  size_t at = 0;
  for (;; at += 8) {
    uint64_t word = 0;
    size_t n = value.size() - at < 8 ? value.size() - at : 8;
    memcpy(&word, value.data() + at, n);
    h = (h ^ word) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    if (n < 8) return h;
  }
}

// Made by the first thread that needs them; a thread that loses the race frees its copy.
std::atomic<uint32_t>* AttributeValues::slots() {
  std::atomic<uint32_t>* slots = slots_.load(std::memory_order_acquire);
  if (slots) return slots;
  // All ids 0: atomics of 0 are zero bytes.
  auto* fresh = static_cast<std::atomic<uint32_t>*>(calloc(kSlots, sizeof(std::atomic<uint32_t>)));
  if (!fresh) return nullptr;
  if (slots_.compare_exchange_strong(slots, fresh, std::memory_order_acq_rel)) {
    memory_bytes_.fetch_add(kSlots * sizeof(std::atomic<uint32_t>), std::memory_order_relaxed);
    return fresh;
  }
  free(fresh);
  return slots;
}

AttributeValues::Entry* AttributeValues::new_entry(uint32_t id) {
  std::atomic<Entry*>& segment = segments_[(id - 1) / kSegmentSize];
  Entry* entries = segment.load(std::memory_order_acquire);
  if (!entries) {
    Entry* fresh = new (std::nothrow) Entry[kSegmentSize]();
    if (!fresh) return nullptr;
    if (segment.compare_exchange_strong(entries, fresh, std::memory_order_acq_rel)) {
      memory_bytes_.fetch_add(kSegmentSize * sizeof(Entry), std::memory_order_relaxed);
      entries = fresh;
    } else {
      delete[] fresh;
    }
  }
  return &entries[(id - 1) % kSegmentSize];
}

uint32_t AttributeValues::intern(std::string_view value) {
  if (value.empty() || value.size() > kMaxLength) return 0;
  uint64_t hash = hash_of(value);
  std::atomic<uint32_t>* slots = this->slots();
  if (!slots) return 0;
  size_t i = hash % kSlots;
  for (;; i = (i + 1) % kSlots) {
    uint32_t id = slots[i].load(std::memory_order_acquire);
    if (id == 0) break;
    if (same(entry(id), value, hash)) return id;
  }
  // Checked first so that a full table's ids stop counting up.
  if (reserved_.load(std::memory_order_relaxed) >= kMaxValues) return 0;
  uint32_t id = reserved_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (id > kMaxValues) return 0;
  Entry* e = new_entry(id);
  if (!e) return 0;
  e->hash = hash;
  e->length = static_cast<uint8_t>(value.size());
  memcpy(e->text, value.data(), value.size());
  // Slots before i were taken when probed, and a slot once taken stays: the probe
  // goes on from the empty one it found.
  for (;; i = (i + 1) % kSlots) {
    uint32_t taken = 0;
    if (slots[i].compare_exchange_strong(taken, id, std::memory_order_release, std::memory_order_acquire)) return id;
    if (same(entry(taken), value, hash)) return taken;  // another thread added it first: id stays unused
  }
}

}  // namespace nmprof
