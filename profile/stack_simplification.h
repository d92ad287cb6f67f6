// How stacks are shown by default, for every output (text, JSON, pprof, collapsed,
// flame graphs): one Java method at one line is one frame whatever tier ran it, the
// allocator wrappers on top are folded (frame_folding.h), and nmprof's own frames
// (its JNI_CreateJavaVM wrapper) are dropped. The recording keeps everything.
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"

namespace nmprof::profile {

struct StackSimplification {
  bool merge_java_frame_types = true;  // false: --frame-types
  bool fold_defaults = true;           // false: --keep-frames
  std::vector<std::string> fold_patterns;  // --fold REGEX, also folded with --keep-frames
};

// Points every allocation at its simplified stack. Frames and stacks are added to the
// profile; the ones no allocation uses any more stay (ids are never reused). Throws
// std::regex_error for a bad fold pattern.
void simplify_stacks(Profile& profile, const StackSimplification& how);

// Whether a frame is nmprof's own code (its library), never the program's.
bool is_nmprof_frame(const Frame& frame);

}  // namespace nmprof::profile
