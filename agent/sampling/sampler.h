// Poisson sampling over allocated bytes. Each thread counts down an exponentially
// distributed number of bytes (mean = the interval); the allocation that crosses zero
// is sampled. An allocation of `size` bytes is thus sampled with probability
// p = 1 - exp(-size/interval), and a sample of it stands for 1/p allocations, which
// makes sum(weight) and sum(weight * size) unbiased estimates of count and bytes.
// The interval may change while threads count down (--rate): a sample is weighted
// with the interval its countdown was drawn with, which each thread keeps.
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/sampling/exp_log.h"
#include "agent/threads/thread_state.h"

namespace nmprof {

class Sampler {
 public:
  // The fast path of every hook: true when this allocation must be sampled.
  static bool countdown(uint64_t size) {
#if defined(__x86_64__)
    // One subtraction in memory whose flags decide (the compiler would load, subtract,
    // store and test: three more instructions on every hooked call).
    bool crossed;
    asm("subq %2, %0" : "+m"(t_state.bytes_until_sample), "=@ccle"(crossed) : "r"(size) : "cc");
    return crossed;
#else
    return (t_state.bytes_until_sample -= static_cast<int64_t>(size)) <= 0;
#endif
  }

  // Countdowns drawn from now on have this mean; those under way keep theirs.
  static void set_interval(uint64_t interval) { interval_.store(interval, std::memory_order_relaxed); }
  static uint64_t interval() { return interval_.load(std::memory_order_relaxed); }

  // Called on the sampled path with the countdown at or below zero. Threads start at
  // zero, so their first allocation lands here: it is then re-decided as if the
  // thread had started with a fresh countdown. Returns false when it is not a sample.
  static bool confirm(ThreadState& t, uint64_t size) {
    if (t.random != 0) return true;
    seed(t);
    t.bytes_until_sample = next_gap(t) - static_cast<int64_t>(size);
    return t.bytes_until_sample <= 0;
  }

  // Starts the next countdown after a sample (the overshoot is discarded: the
  // process is memoryless, so this keeps the probability above exact).
  static void restart(ThreadState& t) { t.bytes_until_sample = next_gap(t); }

  // The weight of a sample of `size` bytes taken by t (its current countdown's interval).
  static float weight(const ThreadState& t, uint64_t size) { return weight(size, t.gap_interval); }
  static float weight(uint64_t size, uint64_t interval) {
    if (interval == 0 || size == 0) return 1.0f;
    // From 17 intervals on, 1 / (1 - exp(-17)) = 1 + 4e-8 is 1 as a float: no exp
    // for the large blocks a tracked block's reallocs weigh again and again.
    if (size / 17 >= interval) return 1.0f;
    double p = -exp_log::exp_minus_one(-static_cast<double>(size) / static_cast<double>(interval));
    return static_cast<float>(1.0 / p);
  }

  // True with `probability`, drawn from the thread's random sequence (which, on a
  // thread not seeded yet, is seeded with its first countdown, as confirm does).
  static bool chance(ThreadState& t, double probability) {
    if (t.random == 0) {
      seed(t);
      t.bytes_until_sample = next_gap(t);
    }
    return static_cast<double>(next_random(t) >> 11) * 0x1.0p-53 < probability;
  }

  // Exposed for tests: the countdown drawn for the next sample, in bytes.
  static int64_t next_gap(ThreadState& t) {
    uint64_t interval = t.gap_interval = Sampler::interval();
    if (interval == 0) return 0;
    // Uniform in (0, 1]: 53 random bits, never 0, so the log is finite.
    double u = static_cast<double>((next_random(t) >> 11) + 1) * 0x1.0p-53;
    double gap = -exp_log::natural_log(u) * static_cast<double>(interval);
    return gap < static_cast<double>(kNeverSample / 2) ? static_cast<int64_t>(gap) + 1 : kNeverSample / 2;
  }

  static void seed(ThreadState& t, uint64_t extra = 0);

 private:
  static uint64_t next_random(ThreadState& t) {
    // xorshift64*: fast, and good enough to drive exponential gaps.
    uint64_t x = t.random;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t.random = x;
    return x * 0x2545F4914F6CDD1Dull;
  }

  static inline std::atomic<uint64_t> interval_{0};
};

}  // namespace nmprof
