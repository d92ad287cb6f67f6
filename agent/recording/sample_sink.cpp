#include "agent/recording/sample_sink.h"

#include <sys/prctl.h>

#include <algorithm>
#include <new>

#include "agent/recording/clock.h"
#include "formats/jfr/writing/event_record.h"

namespace nmprof {
namespace {

namespace schema = jfr::schema;

constexpr size_t kMaxStripeBytes = 4 << 20;  // beyond, a sample waits for the writer
constexpr int kWaitForWriterMillis = 100;    // then, with a stalled writer, it is dropped

// The most an event's body takes: a profiler.Malloc's ten fields and its context (span
// ids, then each attribute's value, a pool key or the value inline); a Free is smaller.
constexpr size_t kMaxFixedBody = 12 * jfr::kMaxVarintLength + 2 * sizeof(float);
constexpr size_t kMaxAttributeBytes = 1 + jfr::kMaxVarintLength + AttributeValues::kMaxLength;

// A profiler.Free event; moved_to: the block lives on there, with its size and weight.
jfr::SmallRecord free_record(uint64_t ticks, uint64_t thread, uintptr_t address, const LiveHeap::Block* moved_to) {
  jfr::SmallRecord r(schema::kFreeEvent);
  r.varint(ticks);
  r.varint(thread);
  r.varint(0);  // no stack: frees are paired with their allocation by address and time
  r.varint(address);
  r.varint(moved_to ? moved_to->address : 0);
  r.varint(moved_to ? moved_to->size : 0);
  r.f32(moved_to ? moved_to->weight : 0.0f);
  return r;
}

}  // namespace

bool SampleSink::track_frees(uint64_t max_tracked) {
  // A restarted recording with other limits gets a new table (the old one is kept:
  // a free may be looking at the filter it published).
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  if (max_tracked && (!live || live->max_blocks() != max_tracked)) live = new (std::nothrow) LiveHeap(max_tracked);
  live_.store(max_tracked ? live : nullptr, std::memory_order_release);
  return !max_tracked || live;
}

// Under the recorder's write lock, with no sampling thread in the middle of a stripe
// (at start, or in a fork child).
void SampleSink::begin_generation(uint32_t generation, uint64_t key_base, int self) {
  key_base_.store(key_base, std::memory_order_relaxed);
  thread_entries_.store(0, std::memory_order_relaxed);
  lost_samples_ = 0;
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->clear(self);
  generation_.store(generation, std::memory_order_release);
}

// A thread gets a new entry in a new output file, and when the JVM told its Java
// identity after its first sample. Under the stripe's lock, so that the entry is
// taken with the event that refers to it.
uint32_t SampleSink::thread_entry(ThreadState& t, uint32_t generation, SampleStripes::Stripe& stripe) {
  if (t.recorder_generation == generation && t.thread_entry_java == t.java_thread) return t.thread_entry;
  ThreadRecord record = {thread_entries_.fetch_add(1, std::memory_order_relaxed) + 1, t.id(), t.java_thread, {}};
  prctl(PR_GET_NAME, record.name);
  stripe.threads.put_bytes(&record, sizeof record);
  t.thread_entry = record.entry;
  t.recorder_generation = generation;
  t.thread_entry_java = t.java_thread;
  return t.thread_entry;
}

// The first thread to use a stack or an attribute value in a generation lists it
// for the writer; the others only read its entry (no write to a shared line on the
// common path).
static void list_once(std::atomic<uint32_t>& listed_in, uint32_t id, uint32_t generation, jfr::ByteBuffer& list) {
  if (listed_in.load(std::memory_order_relaxed) == generation) return;
  if (listed_in.exchange(generation, std::memory_order_relaxed) != generation) list.put_bytes(&id, sizeof id);
}

// Room in the stripe for one event and all it may list (its thread, stack and
// attribute values), made before any of it is written: an event is then recorded
// whole or not at all. A stripe that cannot grow (no address space left: ulimit -v)
// loses the event, counted as lost as when the stack table is full.
bool SampleSink::room_for_event(SampleStripes::Stripe& s, uint32_t attributes) {
  size_t body = kMaxFixedBody + attributes * kMaxAttributeBytes;
  if (s.body.reserve(body) && s.events.reserve(body + jfr::kMaxVarintLength) &&
      s.threads.reserve(sizeof(ThreadRecord)) && s.stacks.reserve(sizeof(uint32_t)) &&
      s.values.reserve(attributes * sizeof(uint32_t)))
    return true;
  lost_samples_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

// A stripe of the current generation with room, or null (the sample is lost). When
// every stripe it may use is full, the thread waits for the writer a moment.
SampleStripes::Stripe* SampleSink::stripe_for_event(int self, uint32_t generation) {
  for (int attempt = 0; attempt < 2; attempt++) {
    uint32_t writes = writer_.writes_done.load(std::memory_order_acquire);
    SampleStripes::Stripe* s = stripes_.acquire(self);
    if (!s) return nullptr;
    if (s->generation == generation && s->bytes() < kMaxStripeBytes) return s;
    bool full = s->generation == generation;
    stripes_.release(s);
    if (!full || writer_.state.load(std::memory_order_acquire) != WriterSignals::kRunning) return nullptr;
    writer_.write_wanted.store(1, std::memory_order_release);
    wake_all(writer_.write_wanted);
    wait_while(writer_.writes_done, writes, kWaitForWriterMillis);
  }
  return nullptr;
}

void SampleSink::record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size,
                                   float weight, schema::AllocatorKey allocator, uint64_t before,
                                   float live_weight) {
  if (live_weight == 0) live_weight = weight;
  if (!recording()) return;
  int self = t.id();
  uint32_t generation = generation_.load(std::memory_order_acquire);
  uint32_t id = stacks_.intern(stack, self);
  if (id) name_frames_now(id, self);
  SampleStripes::Stripe* s = id ? stripe_for_event(self, generation) : nullptr;
  if (!s) {
    lost_samples_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint32_t attributes = context_attribute_count_.load(std::memory_order_relaxed);
  if (!room_for_event(*s, attributes)) {
    stripes_.release(s);
    return;
  }
  uint64_t now = monotonic_ticks();
  uint32_t thread = thread_entry(t, generation, *s);
  list_once(stacks_.entry(id).listed_in, id, generation, s->stacks);
  jfr::ByteBuffer& body = s->body;
  body.clear();
  body.put_varint(schema::kMallocEvent);
  body.put_varint(now);
  body.put_varint(key(thread));
  body.put_varint(key(id));
  body.put_varint(address);
  body.put_varint(size);
  body.put_float(weight);
  body.put_varint(allocator);
  body.put_varint(before);
  body.put_float(live_weight);
  add_context(t.context, generation, *s, attributes);
  jfr::append_record(s->events, body.data(), body.size());
  s->samples++;
  size_t bytes = s->bytes();
  stripes_.release(s);
  if (LiveHeap* live = live_.load(std::memory_order_acquire))
    live->insert({address, size, now, live_weight, id, allocator}, self);
  drain_.event_added(bytes, now);
}

// Frames whose resolver names them when sampled (a runtime's frames that point at
// structures it frees: PHP's) are named by the thread that saw them alive, not later
// by the writer. Only a stack's first samples find such a frame unnamed.
void SampleSink::name_frames_now(uint32_t id, int self) {
  const StackTable::Entry& e = stacks_.entry(id);
  bool unnamed = false;
  for (size_t i = 0; i < e.depth && !unnamed; i++)
    // Only such frames' methods are read: the writer names the others without atomics.
    unnamed = resolver_.named_when_sampled(e.frames[i]) && !__atomic_load_n(&e.methods[i], __ATOMIC_ACQUIRE);
  if (unnamed) drain_.name_frames_now(id, self);
}

// spanId, localRootSpanId, then each attribute's value, into the stripe's event.
void SampleSink::add_context(const nmprof_context_block* context, uint32_t generation, SampleStripes::Stripe& stripe,
                             uint32_t attributes) {
  stripe.body.put_varint(context ? context->span_id : 0);
  stripe.body.put_varint(context ? context->local_root_span_id : 0);
  for (size_t i = 0; i < attributes; i++) {
    size_t length = context ? std::min<size_t>(context->value_length[i], AttributeValues::kMaxLength) : 0;
    add_attribute_value(std::string_view(length ? context->values[i] : "", length), generation, stripe);
  }
}

// Empty: string encoding 1. Otherwise a key of the java.lang.String pool (encoding
// 2), listed for the writer by the first thread to use it in a generation (as
// stacks are); inline (encoding 3) only once the table of values is full.
void SampleSink::add_attribute_value(std::string_view value, uint32_t generation, SampleStripes::Stripe& stripe) {
  uint32_t id = value.empty() ? 0 : attribute_values_.intern(value);
  if (!id) {
    stripe.body.put_string(value);
    return;
  }
  list_once(attribute_values_.entry(id).listed_in, id, generation, stripe.values);
  stripe.body.put_u8(2);
  stripe.body.put_varint(key(id));
}

bool SampleSink::take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return false;
  *taken_at = monotonic_ticks();
  return live->take(address, block, t.id());
}

void SampleSink::settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed,
                              uint64_t kept_if_born_before) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live) return;
  if (!freed)
    live->put_back(block.address, t.id());
  else if (live->remove_taken(block.address, t.id()) && recording())
    append_freed(t, block, taken_at, kept_if_born_before);
}

void SampleSink::move_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, uintptr_t to,
                            uint64_t size, float live_weight) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live) return;
  // A block grown in place again and again (a string appended to) would write an
  // event per realloc: its size is written with the next write instead.
  if (to == block.address) {
    live->resize_taken(to, size, live_weight, taken_at, t.id());
    return;
  }
  if (!live->remove_taken(block.address, t.id()) || !recording()) return;
  LiveHeap::Block moved = block;
  moved.address = to;
  moved.size = size;
  moved.weight = live_weight;
  moved.resized_at = 0;  // the event says its size
  append_free(t, block.address, taken_at, &moved);
  live->insert(moved, t.id());
}

bool SampleSink::grow_block(ThreadState& t, uintptr_t address, uint64_t size, float added, float resized) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return true;  // nothing tracked
  return live->grow(address, size, added, resized, monotonic_ticks(), t.id());
}

void SampleSink::record_free(ThreadState& t, uintptr_t address, uint64_t kept_if_born_before) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return;
  uint64_t now = monotonic_ticks();
  LiveHeap::Block block;
  if (live->remove(address, &block, t.id())) append_freed(t, block, now, kept_if_born_before);
}

void SampleSink::append_freed(ThreadState& t, const LiveHeap::Block& block, uint64_t ticks,
                              uint64_t kept_if_born_before) {
  if (block.ticks >= kept_if_born_before)
    append_free(t, block.address, ticks);
  else if (block.resized_at)
    append_free(t, block.address, ticks, &block);  // kept live, at the size it ended with
}

void SampleSink::append_resizes(jfr::ByteBuffer& events, int self) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live) return;
  // At the time of the last resize: a free of the block (its time is taken before
  // it is looked up) may have come since, and must stay after it.
  live->take_resized(self, [&](const LiveHeap::Block& block) {
    free_record(block.resized_at, 0, block.address, &block).append_to(events);
  });
}

void SampleSink::forget_blocks_of(ThreadState& t, schema::AllocatorKey allocator) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording() || !live->blocks_of(allocator)) return;
  uint64_t now = monotonic_ticks();
  live->remove_all_of(allocator, t.id(), [&](uintptr_t address) { append_free(t, address, now); });
}

void SampleSink::append_free(ThreadState& t, uintptr_t address, uint64_t ticks, const LiveHeap::Block* moved_to) {
  int self = t.id();
  uint32_t generation = generation_.load(std::memory_order_acquire);
  SampleStripes::Stripe* s = stripe_for_event(self, generation);
  if (!s) return;  // the block is forgotten: it stays live in the file
  if (!room_for_event(*s, 0)) {
    stripes_.release(s);
    return;
  }
  free_record(ticks, key(thread_entry(t, generation, *s)), address, moved_to).append_to(s->events);
  size_t bytes = s->bytes();
  stripes_.release(s);
  drain_.event_added(bytes, ticks);
}

// The arena's lock comes after (agent.cpp).
void SampleSink::before_fork(int self) {
  stacks_.before_fork(self);
  stripes_.before_fork(self);
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->before_fork(self);
}

void SampleSink::after_fork() {
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->after_fork();
  stripes_.after_fork();
  stacks_.after_fork();
}

bool SampleSink::locked() const {
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  return stacks_.locked() || stripes_.locked() || (live && live->locked());
}

// Its locks, or the arena's (which an addition to the stack table holds while it
// allocates), are this thread's.
bool SampleSink::owned_by(int self) const {
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  return stacks_.owned_by(self) || stripes_.owned_by(self) || (live && live->owned_by(self));
}

}  // namespace nmprof
