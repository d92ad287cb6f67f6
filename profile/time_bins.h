// A fixed number of time bins that come to cover whatever span a recording's events
// turn out to have, for series kept while the recording is read (so that they cost
// the same memory however long the run). Bins start 1 us wide and double (neighbours
// merged) whenever an event falls outside the span they cover. Any int64 time fits
// (a damaged file's times may span the whole range).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmprof::profile {

class TimeBins {
 public:
  // Where a bin of the span before a widening went: bin i became bin (*this)(i).
  struct Widening {
    uint64_t shift;  // old start - new start
    uint64_t width;  // the old bin width
    size_t operator()(size_t i) const { return (shift + i * width) / (2 * width); }
  };

  explicit TimeBins(size_t count) : count_(count) {}

  // Makes the span take in `time_nanos` (the first time starts it), calling
  // widened(Widening) at each doubling so that the owner can merge its bins.
  template <class Widened>
  void cover(int64_t time_nanos, Widened&& widened) {
    if (!started_) {
      origin_ = time_nanos;
      started_ = true;
    }
    while (time_nanos < origin_) widened(widen(true));
    while (since_origin(time_nanos) / width_ >= count_) widened(widen(false));
  }
  // The bin of a time the span covers.
  size_t bin(int64_t time_nanos) const { return static_cast<size_t>(since_origin(time_nanos) / width_); }

  bool started() const { return started_; }
  size_t count() const { return count_; }
  int64_t start_nanos() const { return origin_; }
  int64_t bin_nanos() const { return static_cast<int64_t>(width_); }
  // When bin i begins.
  int64_t bin_start(size_t i) const { return static_cast<int64_t>(static_cast<uint64_t>(origin_) + i * width_); }

 private:
  // Doubles the bin width. The span grows to the right, or to the left by the old span
  // (as far as the earliest time there is).
  Widening widen(bool to_the_left);
  uint64_t since_origin(int64_t time_nanos) const {  // time_nanos >= origin_
    return static_cast<uint64_t>(time_nanos) - static_cast<uint64_t>(origin_);
  }

  size_t count_;
  bool started_ = false;
  int64_t origin_ = 0;
  uint64_t width_ = 1000;
};

}  // namespace nmprof::profile
