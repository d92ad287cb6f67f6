// Where sampling threads put what they record until the writer takes it: a few
// stripes, each a lock with its own buffers. A thread tries the stripe its id maps
// to, then the others, and waits only when every stripe is busy, so threads that
// sample at the same time do not wait for each other (async-profiler stripes its
// sample locks the same way, but drops a sample when three stripes are busy; here
// nothing is dropped). The writer swaps a stripe's buffers for empty ones, which
// holds its lock for a moment only. A thread that exits leaves nothing behind: what
// it recorded is in a stripe already.
#pragma once

#include <cstdint>

#include "agent/safety/spin_lock.h"
#include "formats/jfr/writing/byte_buffer.h"

namespace nmprof {

class SampleStripes {
 public:
  static constexpr unsigned kStripes = 16;

  struct alignas(64) Stripe {
    SpinLock lock;
    uint32_t generation = 0;  // the output generation the buffers belong to
    jfr::ByteBuffer events;   // encoded JFR events
    jfr::ByteBuffer stacks;   // varints: stacks first used in this generation
    jfr::ByteBuffer threads;  // thread records (recorder.cpp): threads first seen in it
    jfr::ByteBuffer values;   // uint32s: context attribute values first used in this generation
    uint64_t samples = 0;     // allocation events in `events`
    jfr::ByteBuffer body;     // the event being encoded (kept: no allocation per event)

    size_t bytes() const { return events.size() + stacks.size() + threads.size() + values.size(); }
  };

  // A stripe held for `self`, or null when the only free stripes would be those
  // `self` holds already (a signal handler interrupted it).
  Stripe* acquire(int self);
  void release(Stripe* s) { s->lock.unlock(); }

  // The writer: swaps stripe i's buffers and sample count with `into`'s (empty).
  // From a signal handler, it gives up at `deadline` (monotonic ticks) rather than
  // wait longer, or at once if `self` holds the stripe: false then.
  bool take(unsigned i, Stripe& into, int self, uint64_t deadline = UINT64_MAX);
  // Empties every stripe and makes them take records of `generation` only.
  void reset(uint32_t generation, int self);
  bool owned_by(int self) const;
  bool locked() const;  // by any thread

  // fork(): all held across it (those `self` holds already are left as they are).
  void before_fork(int self);
  void after_fork();

 private:
  Stripe stripes_[kStripes];
  int held_for_fork_ = 0;  // bit per stripe taken by before_fork
};

}  // namespace nmprof
