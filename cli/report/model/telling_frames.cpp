#include "cli/report/model/telling_frames.h"

#include <algorithm>

#include "cli/report/model/frame_names.h"

namespace nmprof::report {

std::vector<TellingFrame> telling_frames(const profile::Profile& profile, const std::vector<uint32_t>& stacks) {
  std::vector<TellingFrame> out(stacks.size());
  for (size_t i = 0; i < stacks.size(); i++) {
    const auto& frames = profile.stacks()[stacks[i]].frames;
    for (size_t j = 0; j < stacks.size(); j++) {
      const auto& other = profile.stacks()[stacks[j]].frames;
      if (i == j || stacks[i] == stacks[j]) continue;
      auto differ = std::mismatch(frames.begin(), frames.end(), other.begin(), other.end());
      size_t shared = static_cast<size_t>(differ.first - frames.begin());
      if (shared == 0 || (out[i].index != SIZE_MAX && shared <= out[i].index)) continue;
      out[i].index = shared;
      out[i].same_function = differ.first != frames.end() && differ.second != other.end() &&
                             function_name(profile.frames()[*differ.first]) ==
                                 function_name(profile.frames()[*differ.second]);
    }
  }
  return out;
}

}  // namespace nmprof::report
