#include "agent/recording/sample_stripes.h"

#include <sched.h>

#include <utility>

#include "agent/recording/clock.h"

namespace nmprof {

SampleStripes::Stripe* SampleStripes::acquire(int self) {
  unsigned first = static_cast<unsigned>(self) % kStripes;
  for (;;) {
    bool all_ours = true;
    for (unsigned n = 0; n < kStripes; n++) {
      Stripe& s = stripes_[(first + n) % kStripes];
      if (s.lock.try_lock(self)) return &s;
      all_ours = all_ours && s.lock.owner() == self;
    }
    if (all_ours) return nullptr;
    // Every stripe is busy: more threads sample at once than there are stripes.
    sched_yield();
  }
}

bool SampleStripes::take(unsigned i, Stripe& into, int self, uint64_t deadline) {
  Stripe& s = stripes_[i];
  if (s.lock.owner() == self) return false;
  while (!s.lock.try_lock(self)) {
    if (monotonic_ticks() >= deadline) return false;
    sched_yield();
  }
  std::swap(s.events, into.events);
  std::swap(s.stacks, into.stacks);
  std::swap(s.threads, into.threads);
  std::swap(s.values, into.values);
  std::swap(s.samples, into.samples);
  into.generation = s.generation;
  s.lock.unlock();
  return true;
}

void SampleStripes::reset(uint32_t generation, int self) {
  for (Stripe& s : stripes_) {
    bool held = s.lock.owner() == self;  // after fork(), held for it
    if (!held) s.lock.lock(self);
    s.events.clear();
    s.stacks.clear();
    s.threads.clear();
    s.values.clear();
    s.samples = 0;
    s.generation = generation;
    if (!held) s.lock.unlock();
  }
}

bool SampleStripes::owned_by(int self) const {
  for (const Stripe& s : stripes_)
    if (s.lock.owner() == self) return true;
  return false;
}

bool SampleStripes::locked() const {
  for (const Stripe& s : stripes_)
    if (s.lock.owner() != 0) return true;
  return false;
}

void SampleStripes::before_fork(int self) {
  held_for_fork_ = 0;
  for (unsigned i = 0; i < kStripes; i++) {
    if (stripes_[i].lock.owner() == self) continue;
    stripes_[i].lock.lock(self);
    held_for_fork_ |= 1 << i;
  }
}

void SampleStripes::after_fork() {
  for (unsigned i = 0; i < kStripes; i++)
    if (held_for_fork_ & (1 << i)) stripes_[i].lock.unlock();
}

}  // namespace nmprof
