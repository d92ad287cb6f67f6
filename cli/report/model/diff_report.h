// `nmprof report NEW --diff BASE`: what changed between two recordings of the same
// program, per stack and per function, in allocated and in live bytes, most growth
// first. Stacks and functions are matched by name (pools differ between files).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "cli/report/model/aggregation.h"
#include "profile/profile.h"

namespace nmprof::report {

struct DiffValues {
  Totals base_allocated, new_allocated;
  Totals base_live, new_live;

  // Change of the view's bytes, new minus base.
  double growth(bool live) const {
    return live ? new_live.bytes - base_live.bytes : new_allocated.bytes - base_allocated.bytes;
  }
  // Half the width of the change's interval: the two recordings are sampled apart,
  // so their variances add.
  double growth_margin(bool live, double z) const {
    const Totals &base = view(live, false), &now = view(live, true);
    return z * std::sqrt(std::max(0.0, base.bytes_variance + now.bytes_variance));
  }
  // Whether the change lies outside its interval (at --nativemem 0, any change does).
  bool significant(bool live, double z) const { return std::abs(growth(live)) > growth_margin(live, z); }
  // The view's totals (live or allocated) in the new or the base recording.
  const Totals& view(bool live, bool is_new) const {
    return live ? (is_new ? new_live : base_live) : (is_new ? new_allocated : base_allocated);
  }
};

// A stack or a function, shown as it is in the recording it was first met in.
struct DiffRow {
  const profile::Profile* profile = nullptr;
  uint32_t id = 0;  // a stack, or for a function row one of its frames (kNoFrame: no stack)
  DiffValues values;
};

struct Diff {
  std::string base_file, new_file;
  bool live = false;      // ranked by live bytes instead of allocated bytes
  bool has_live = false;  // both recordings tracked frees
  double confidence = 0.95;  // of the changes' intervals (--confidence)
  DiffValues totals;
  std::vector<DiffRow> stacks;     // most growth first
  std::vector<DiffRow> functions;  // self values (the function is innermost), most growth first
  std::vector<std::string> warnings;  // what makes the two recordings compare badly
};

// Throws ReportError when the recordings are of different programs or share no function,
// or when `live` is asked of recordings without live data.
Diff diff_profiles(const profile::Profile& base, const profile::Profile& now, bool live);

}  // namespace nmprof::report
