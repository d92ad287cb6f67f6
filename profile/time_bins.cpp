#include "profile/time_bins.h"

namespace nmprof::profile {

TimeBins::Widening TimeBins::widen(bool to_the_left) {
  int64_t origin = origin_;
  if (to_the_left) {
    uint64_t room = static_cast<uint64_t>(origin_) - static_cast<uint64_t>(INT64_MIN);
    origin = room / count_ < width_ ? INT64_MIN
                                    : static_cast<int64_t>(static_cast<uint64_t>(origin_) - width_ * count_);
  }
  Widening widening{static_cast<uint64_t>(origin_) - static_cast<uint64_t>(origin), width_};
  origin_ = origin;
  width_ *= 2;
  return widening;
}

}  // namespace nmprof::profile
