// --rate: holds the process near a target number of samples per second by adapting
// the sampling interval. It runs on the sampled path only, whichever sampling thread
// ends a window first; the hooks' fast path never sees it. A sample's weight uses the
// interval its countdown was drawn with (ThreadState::gap_interval), so estimates stay
// unbiased however the interval moves.
#pragma once

#include <atomic>
#include <cstdint>

namespace nmprof {

class RateLimit {
 public:
  // A window ends after this long, or sooner once it holds twice its share of
  // samples (so a fast start is corrected within milliseconds, not seconds).
  static constexpr uint64_t kWindowNanos = 100'000'000;

  // target 0: off. The interval then stays within [lowest(), highest()].
  void start(uint64_t target_per_second, uint64_t base_interval, uint64_t now_nanos);
  bool active() const { return target_ != 0; }
  // One sample, taken at now_nanos: returns the interval to draw countdowns with.
  uint64_t on_sample(uint64_t now_nanos);

  uint64_t interval() const { return interval_.load(std::memory_order_relaxed); }
  uint64_t lowest() const { return lowest_; }
  uint64_t highest() const { return highest_; }
  // The range the interval went through since start(): what the recording reports.
  uint64_t min_used() const { return min_used_.load(std::memory_order_relaxed); }
  uint64_t max_used() const { return max_used_.load(std::memory_order_relaxed); }

 private:
  uint64_t next_interval(uint64_t samples, uint64_t elapsed_nanos) const;

  uint64_t target_ = 0;
  uint64_t lowest_ = 0;
  uint64_t highest_ = 0;
  std::atomic<uint64_t> interval_{0};
  std::atomic<uint64_t> window_start_{0};
  std::atomic<uint64_t> window_samples_{0};
  std::atomic<uint64_t> min_used_{0};
  std::atomic<uint64_t> max_used_{0};
};

}  // namespace nmprof
