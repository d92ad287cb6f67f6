#include "profile/stack_simplification.h"

#include <algorithm>

#include "profile/frame_folding.h"

namespace nmprof::profile {
namespace {

constexpr uint32_t kUnmapped = UINT32_MAX;
constexpr uint32_t kDropped = UINT32_MAX - 1;

class Simplifier {
 public:
  Simplifier(Profile& profile, const StackSimplification& how)
      : profile_(profile),
        how_(how),
        folder_(how.fold_defaults, how.fold_patterns),
        frame_map_(profile.frames().size(), kUnmapped),
        folds_(profile.frames().size(), -1),
        stack_map_(profile.stacks().size(), kUnmapped) {}

  uint32_t stack(uint32_t id) {
    if (stack_map_[id] != kUnmapped) return stack_map_[id];
    const Stack original = profile_.stacks()[id];  // a copy: add_stack may grow the vector
    Stack simplified;
    simplified.truncated = original.truncated;
    for (size_t i = 0; i < original.frames.size(); i++) {
      uint32_t mapped = frame(original.frames[i]);
      if (mapped == kDropped) continue;
      if (simplified.frames.empty() && folds(original.frames[i]) && frames_follow(original, i)) continue;
      simplified.frames.push_back(mapped);
    }
    return stack_map_[id] = profile_.add_stack(simplified);
  }

 private:
  // The frame shown for frame `id`, or kDropped.
  uint32_t frame(uint32_t id) {
    if (frame_map_[id] != kUnmapped) return frame_map_[id];
    Frame f = profile_.frames()[id];
    if (is_nmprof_frame(f)) return frame_map_[id] = kDropped;
    bool tiered = f.kind == FrameKind::Interpreted || f.kind == FrameKind::JitCompiled || f.kind == FrameKind::Inlined;
    if (how_.merge_java_frame_types && tiered) {
      f.kind = FrameKind::Java;
      return frame_map_[id] = profile_.add_frame(f);
    }
    return frame_map_[id] = id;
  }

  bool folds(uint32_t id) {
    if (folds_[id] < 0) folds_[id] = folder_.folds(profile_.frames()[id]) ? 1 : 0;
    return folds_[id] == 1;
  }

  // Whether a frame shown follows frame i: a stack made only of folded frames keeps its
  // outermost one, so it still says something.
  bool frames_follow(const Stack& stack, size_t i) {
    return std::any_of(stack.frames.begin() + static_cast<std::ptrdiff_t>(i) + 1, stack.frames.end(),
                       [this](uint32_t f) { return frame(f) != kDropped; });
  }

  Profile& profile_;
  const StackSimplification& how_;
  FrameFolder folder_;
  std::vector<uint32_t> frame_map_;
  std::vector<int8_t> folds_;
  std::vector<uint32_t> stack_map_;
};

}  // namespace

bool is_nmprof_frame(const Frame& frame) {
  return !is_runtime_frame(frame.kind) && frame.container == "libnmprof.so";
}

void simplify_stacks(Profile& profile, const StackSimplification& how) {
  Simplifier simplifier(profile, how);
  profile.map_stacks([&simplifier](uint32_t stack) { return simplifier.stack(stack); });
}

}  // namespace nmprof::profile
