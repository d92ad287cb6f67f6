// The sampled path of a recording: a sampled allocation, or the free of a tracked
// block, encoded into a stripe (sample_stripes.h) by the thread that made it. Stacks
// are found in a table that is lock-free for known stacks, so sampling threads do
// not wait for each other; a generation's first use of a thread, stack or attribute
// value lists it for the writer (recording_writer.h), which takes what the stripes
// hold. The sink takes no lock the writer holds for long.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "agent/recording/attribute_values.h"
#include "agent/recording/sample_stripes.h"
#include "agent/recording/writer_thread.h"
#include "agent/sampling/live_heap.h"
#include "agent/stacks/call_stack.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/stacks/stack_table.h"
#include "agent/threads/thread_state.h"
#include "formats/jfr/nmprof_schema.h"
#include "include/nmprof.h"

namespace nmprof {

struct JavaThreadInfo;

class SampleSink {
 public:
  // What the sink asks of the recording it feeds (recorder.h).
  class Drain {
   public:
    // An event was added to a stripe now `stripe_bytes` long: a write may be due.
    virtual void event_added(size_t stripe_bytes, uint64_t now) = 0;
    // Names the frames of stack `id` that the resolver names on the sampled path.
    virtual void name_frames_now(uint32_t id, int self) = 0;

   protected:
    ~Drain() = default;
  };

  // A thread's first sample in a generation: what its pool entry needs.
  struct ThreadRecord {
    uint32_t entry;
    int tid;
    const JavaThreadInfo* java;
    char name[16];
  };

  // `writer`: the writer thread, which a thread waits for when its stripe is full.
  SampleSink(FrameResolver& resolver, Drain& drain, WriterSignals& writer)
      : resolver_(resolver), drain_(drain), writer_(writer) {}

  void record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size, float weight,
                         jfr::schema::AllocatorKey allocator, uint64_t before, float live_weight);
  void record_free(ThreadState& t, uintptr_t address, uint64_t kept_if_born_before);
  void forget_blocks_of(ThreadState& t, jfr::schema::AllocatorKey allocator);
  bool take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at);
  void settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed,
                    uint64_t kept_if_born_before);
  void move_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, uintptr_t to, uint64_t size,
                  float live_weight);
  // added, resized: as LiveHeap::resized_weight takes them.
  bool grow_block(ThreadState& t, uintptr_t address, uint64_t size, float added, float resized);
  // The writer's, before each write: the blocks reallocs resized in place since the
  // last one (move_block) are moved to where they are, with their size now, as of
  // their last resize (a Free event each, of no thread, appended to `events`).
  void append_resizes(jfr::ByteBuffer& events, int self);

  // Set by the recorder, under its write lock.
  bool recording() const { return active_.load(std::memory_order_acquire); }
  void set_recording(bool on) { active_.store(on, std::memory_order_release); }
  // max_tracked > 0 tracks frees of sampled blocks, up to that many at once (false:
  // no memory for the table, frees are not tracked).
  bool track_frees(uint64_t max_tracked);
  void set_context_attributes(uint32_t count) { context_attribute_count_.store(count, std::memory_order_relaxed); }
  // A new output file: events of the old generation still in a stripe are dropped,
  // and the live blocks forgotten. key_base: what pool keys of the file start with.
  void begin_generation(uint32_t generation, uint64_t key_base, int self);

  // The writer's view.
  uint32_t generation() const { return generation_.load(std::memory_order_relaxed); }
  uint64_t key_base() const { return key_base_.load(std::memory_order_relaxed); }
  uint64_t key(uint32_t id) const { return key_base_.load(std::memory_order_relaxed) | id; }
  uint64_t lost_samples() const { return lost_samples_.load(std::memory_order_relaxed); }
  LiveHeap* live() const { return live_.load(std::memory_order_relaxed); }
  SampleStripes& stripes() { return stripes_; }
  const StackTable& stacks() const { return stacks_; }
  const AttributeValues& attribute_values() const { return attribute_values_; }
  size_t memory_bytes() const { return stacks_.memory_bytes() + attribute_values_.memory_bytes(); }

  // fork(): no thread is left in the middle of a stripe, a stack addition or the live heap.
  void before_fork(int self);
  void after_fork();
  bool locked() const;
  bool owned_by(int self) const;

 private:
  uint32_t thread_entry(ThreadState& t, uint32_t generation, SampleStripes::Stripe& stripe);
  bool room_for_event(SampleStripes::Stripe& s, uint32_t attributes);
  void add_context(const nmprof_context_block* context, uint32_t generation, SampleStripes::Stripe& stripe,
                   uint32_t attributes);
  void add_attribute_value(std::string_view value, uint32_t generation, SampleStripes::Stripe& stripe);
  void name_frames_now(uint32_t id, int self);
  SampleStripes::Stripe* stripe_for_event(int self, uint32_t generation);
  // moved_to: the block lives on there (a realloc's move), else it is freed.
  void append_free(ThreadState& t, uintptr_t address, uint64_t ticks, const LiveHeap::Block* moved_to = nullptr);
  // A tracked block freed at `ticks`, out of the live heap: its Free event; none for a
  // leftover (born before kept_if_born_before: it stays live in the file), unless a
  // realloc resized it in place since the last write (then its size at the end).
  void append_freed(ThreadState& t, const LiveHeap::Block& block, uint64_t ticks, uint64_t kept_if_born_before);

  FrameResolver& resolver_;
  Drain& drain_;
  WriterSignals& writer_;
  std::atomic<bool> active_{false};
  std::atomic<uint32_t> generation_{0};  // bumped per output file; pool entries carry the one they were written in
  // pid << 32, and the process image (exec) in the top bits: pool keys stay unique
  // when the chunks of several processes and images are joined (the JDK's reader
  // keeps the first entry of a key for all chunks).
  std::atomic<uint64_t> key_base_{0};
  std::atomic<uint32_t> thread_entries_{0};  // given out in this generation
  std::atomic<uint64_t> lost_samples_{0};
  std::atomic<LiveHeap*> live_{nullptr};  // null when frees are not tracked
  std::atomic<uint32_t> context_attribute_count_{0};
  SampleStripes stripes_;
  StackTable stacks_;
  AttributeValues attribute_values_;
};

}  // namespace nmprof
