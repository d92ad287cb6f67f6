// Chooses which samples and frees a Profile takes in while a recording is read. The
// profile sums samples and forgets each one, so a reader's own selection (a report's
// --pid, --thread, --from, --to) has to be made on the way in.
#pragma once

#include <cstdint>

#include "profile/profile.h"

namespace nmprof::profile {

class SampleSelector {
 public:
  virtual ~SampleSelector() = default;
  virtual bool keeps(const Profile& profile, const Sample& sample) = 0;
  // A free of `process` at `time_nanos`: one turned away frees nothing.
  virtual bool keeps_free(const Profile& profile, uint32_t process, int64_t time_nanos) = 0;
};

}  // namespace nmprof::profile
