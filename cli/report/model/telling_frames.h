// Stacks shown together are cut (--depth, one line in the live section): two that
// differ only below the cut would look the same. The frame where each stack first
// differs from the one most like it is shown whatever the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile/profile.h"

namespace nmprof::report {

struct TellingFrame {
  size_t index = SIZE_MAX;  // in the stack; SIZE_MAX: no other stack shares its top frame
  // The other stack has a frame of the same function there: only the line (or the
  // library) tells them apart, so the line must be shown.
  bool same_function = false;
};

// For each of `stacks` (stack ids), the frame after the longest run of top frames it
// shares with another of them. A stack that is all top frames of another has none
// (index = its size): the other one shows its own.
std::vector<TellingFrame> telling_frames(const profile::Profile& profile, const std::vector<uint32_t>& stacks);

}  // namespace nmprof::report
