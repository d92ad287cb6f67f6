#include "profile/earliest_ahead.h"

#include <algorithm>

namespace nmprof::profile {

void EarliestAhead::add(int64_t time_nanos) {
  if (block_begins(events_++))
    earliest_.push_back(time_nanos);
  else
    earliest_.back() = std::min(earliest_.back(), time_nanos);
}

void EarliestAhead::finish() {
  for (size_t i = earliest_.size(); i-- > 1;) earliest_[i - 1] = std::min(earliest_[i - 1], earliest_[i]);
}

}  // namespace nmprof::profile
