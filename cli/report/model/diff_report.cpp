#include "cli/report/model/diff_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "cli/report/model/frame_names.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/model/report.h"

namespace nmprof::report {
namespace {

using profile::Profile;

std::string program_of(const Profile& profile) {
  for (const auto& p : profile.processes)
    if (!p.executable.empty()) return std::filesystem::path(p.executable).filename().string();
  return {};
}

// Whether the profile's reallocs counted the bytes they added, when its processes say.
std::optional<bool> counts_realloc_growth(const Profile& profile) {
  std::optional<bool> counts;
  for (const auto& p : profile.processes)
    if (p.counts_realloc_growth) counts = counts.value_or(false) || *p.counts_realloc_growth;
  return counts;
}

class DiffBuilder {
 public:
  explicit DiffBuilder(Diff& diff) : diff_(diff) {}

  void add(const Profile& profile, const HeapView& view, bool is_new) {
    side(diff_.totals, is_new, view.allocated, view.live);
    for (const auto& s : view.stacks) {
      const auto& frames = profile.stacks()[s.stack].frames;
      DiffRow& stack = row(stacks_, collapsed_stack(profile, profile.stacks()[s.stack]), profile, s.stack);
      side(stack.values, is_new, s.allocated, s.live);
      uint32_t leaf = frames.empty() ? kNoFrame : frames[0];
      std::string name = frames.empty() ? "" : function_name(profile.frames()[leaf]) + '\x1f' +
                                                    function_location(profile.frames()[leaf]);
      DiffRow& function = row(functions_, name, profile, leaf);
      side(function.values, is_new, s.allocated, s.live);
      (is_new ? new_functions_ : base_functions_).insert(name);
    }
  }

  bool share_a_function() const {
    return std::any_of(new_functions_.begin(), new_functions_.end(),
                       [this](const auto& f) { return !f.empty() && base_functions_.count(f); });
  }

  void finish() {
    for (auto [rows, out] : {std::pair{&stacks_, &diff_.stacks}, {&functions_, &diff_.functions}}) {
      for (auto& [key, r] : *rows) out->push_back(r);
      std::stable_sort(out->begin(), out->end(), [live = diff_.live](const DiffRow& x, const DiffRow& y) {
        return x.values.growth(live) > y.values.growth(live);
      });
    }
  }

 private:
  static void side(DiffValues& v, bool is_new, const Totals& allocated, const Totals& live) {
    (is_new ? v.new_allocated : v.base_allocated).add(allocated);
    (is_new ? v.new_live : v.base_live).add(live);
  }

  static DiffRow& row(std::map<std::string, DiffRow>& rows, const std::string& key, const Profile& profile,
                      uint32_t id) {
    auto [it, added] = rows.try_emplace(key);
    if (added) it->second = {&profile, id, {}};
    return it->second;
  }

  Diff& diff_;
  std::map<std::string, DiffRow> stacks_, functions_;  // ordered: equal growth keeps name order
  std::set<std::string> base_functions_, new_functions_;
};

}  // namespace

Diff diff_profiles(const Profile& base, const Profile& now, bool live) {
  std::string base_program = program_of(base), new_program = program_of(now);
  if (!base_program.empty() && !new_program.empty() && base_program != new_program)
    throw ReportError("the base recording is of " + base_program + ", this one of " + new_program +
                      ": a diff compares two recordings of the same program");
  if (live) {
    check_live_view(base);
    check_live_view(now);
  }
  Diff diff;
  diff.live = live;
  std::optional<bool> base_growth = counts_realloc_growth(base), new_growth = counts_realloc_growth(now);
  if (base_growth && new_growth && *base_growth != *new_growth)
    diff.warnings.push_back(std::string(*base_growth ? "this recording" : "the base recording") +
                            " counts each realloc at its whole new size (made by nmprof before 0.2), " +
                            (*base_growth ? "the base" : "this one") +
                            " what each realloc adds: stacks that call realloc differ by that alone");
  HeapView base_view = heap_view(base), new_view = heap_view(now);
  diff.has_live = base_view.has_live && new_view.has_live;
  DiffBuilder builder(diff);
  builder.add(now, new_view, true);  // rows show the new recording's names
  builder.add(base, base_view, false);
  if (!builder.share_a_function())
    throw ReportError("no function in common with the base recording: these are not recordings of one program");
  builder.finish();
  return diff;
}

}  // namespace nmprof::report
