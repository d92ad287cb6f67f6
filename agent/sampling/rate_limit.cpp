#include "agent/sampling/rate_limit.h"

#include <algorithm>
#include <cmath>

#include "protocol/agent_options.h"

namespace nmprof {

void RateLimit::start(uint64_t target_per_second, uint64_t base_interval, uint64_t now_nanos) {
  target_ = target_per_second;
  if (target_ == 0) {  // the interval stays as chosen: a range of one
    interval_.store(base_interval, std::memory_order_relaxed);
    min_used_.store(base_interval, std::memory_order_relaxed);
    max_used_.store(base_interval, std::memory_order_relaxed);
    return;
  }
  // Down to 1/64 of the chosen interval (finer costs more than the user asked for),
  // up to far beyond it: a tight loop can allocate gigabytes per second.
  lowest_ = std::max<uint64_t>(base_interval / 64, 1);
  highest_ = std::max(base_interval, kDefaultInterval) * 1024;
  uint64_t first = std::clamp(base_interval, lowest_, highest_);
  interval_.store(first, std::memory_order_relaxed);
  min_used_.store(first, std::memory_order_relaxed);
  max_used_.store(first, std::memory_order_relaxed);
  window_samples_.store(0, std::memory_order_relaxed);
  window_start_.store(now_nanos, std::memory_order_relaxed);
}

uint64_t RateLimit::on_sample(uint64_t now_nanos) {
  uint64_t samples = window_samples_.fetch_add(1, std::memory_order_relaxed) + 1;
  uint64_t start = window_start_.load(std::memory_order_relaxed);
  uint64_t elapsed = now_nanos > start ? now_nanos - start : 0;
  uint64_t share = std::max<uint64_t>(target_ * kWindowNanos / 1'000'000'000, 1);
  bool window_over = elapsed >= kWindowNanos || (samples >= 2 * share && elapsed > 0);
  // One thread ends the window; the others keep the interval in force.
  if (!window_over || !window_start_.compare_exchange_strong(start, now_nanos, std::memory_order_relaxed))
    return interval();
  samples = window_samples_.exchange(0, std::memory_order_relaxed);
  uint64_t next = next_interval(samples, elapsed);
  interval_.store(next, std::memory_order_relaxed);
  if (next < min_used()) min_used_.store(next, std::memory_order_relaxed);
  if (next > max_used()) max_used_.store(next, std::memory_order_relaxed);
  return next;
}

// The sample rate is inversely proportional to the interval: scaling the interval by
// rate/target would hit the target next window. Near it, only half that step is
// taken (in log space), so the few samples of one window do not make it jitter.
uint64_t RateLimit::next_interval(uint64_t samples, uint64_t elapsed_nanos) const {
  double rate = static_cast<double>(samples) * 1e9 / static_cast<double>(elapsed_nanos);
  double error = rate / static_cast<double>(target_);
  double step = error > 0.5 && error < 2 ? std::sqrt(error) : error;
  step = std::clamp(step, 1.0 / 16, 16.0);
  double next = static_cast<double>(interval()) * step;
  return static_cast<uint64_t>(std::clamp(next, static_cast<double>(lowest_), static_cast<double>(highest_)));
}

}  // namespace nmprof
