// Sums sampled allocations by stack and by function (pprof's flat and cum),
// and summarises how old a set of live allocations is.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "profile/profile.h"

namespace nmprof::report {

using profile::Totals;

struct StackRow {
  uint32_t stack = 0;
  Totals totals;
  std::vector<std::pair<uint32_t, double>> processes;  // process index and bytes, largest first
};

constexpr uint32_t kNoFrame = UINT32_MAX;  // FunctionRow of samples without any frame

// Frames of one function (a Java method at several lines, or in several JIT tiers)
// share one function id, numbered from 0 in the order first asked.
class FunctionIds {
 public:
  explicit FunctionIds(const profile::Profile& profile);
  uint32_t of(uint32_t frame);
  size_t count() const { return first_frame_.size(); }
  uint32_t first_frame(uint32_t id) const { return first_frame_[id]; }

 private:
  const profile::Profile& profile_;
  std::vector<uint32_t> of_frame_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<uint32_t> first_frame_;
};

struct FunctionRow {
  uint32_t frame = kNoFrame;  // one frame of the function, for its name and kind
  Totals self;                // the function is the innermost frame (of PHP code, in a PHP stack)
  Totals total;               // the function is anywhere in the stack (once per stack)
};

struct Aggregate {
  Totals totals;
  std::vector<StackRow> stacks;        // most bytes first
  std::vector<FunctionRow> functions;  // most self bytes first
};

// Over Profile::allocations() by index: what they allocated, or with `live` what of
// it is live at the end.
Aggregate aggregate(const profile::Profile& profile, std::span<const uint32_t> allocations, bool live);

// Ages of allocations at the end of the recording of their process, weighted by bytes.
struct AgeSummary {
  int64_t median_nanos = 0;  // at least half of the bytes are this old or older
  int64_t oldest_nanos = 0;
  // Share of the bytes allocated in each quarter of the recording (first to last):
  // a cache filled at start weighs on the first, steady growth spreads evenly.
  std::array<double, 4> share_by_quarter{};
};

AgeSummary age_summary(const profile::Profile& profile, std::span<const profile::LiveSample> live);

}  // namespace nmprof::report
