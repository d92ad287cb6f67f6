#include "cli/report/diff_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "cli/report/frame_names.h"
#include "cli/report/heap_view.h"
#include "cli/report/json_writer.h"
#include "cli/report/report.h"
#include "cli/report/text_layout.h"
#include "cli/report/text_report.h"
#include "cli/report/units.h"

namespace nmprof::report {
namespace {

using profile::Profile;

std::string program_of(const Profile& profile) {
  for (const auto& p : profile.processes)
    if (!p.executable.empty()) return std::filesystem::path(p.executable).filename().string();
  return {};
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

std::string signed_bytes(double bytes) {
  if (std::abs(bytes) < 0.5) return "0 B";
  return (bytes < 0 ? "-" : "+") + format_bytes(std::abs(bytes));
}

std::string change_text(double base, double now) {
  std::string text = signed_bytes(now - base);
  if (base > 0) text += " (" + std::string(now >= base ? "+" : "") + format_percent((now - base) / base) + ")";
  return text;
}

const Totals& view_of(const DiffValues& v, bool live, bool is_new) {
  return live ? (is_new ? v.new_live : v.base_live) : (is_new ? v.new_allocated : v.base_allocated);
}

std::string row_name(const DiffRow& r, bool stack, size_t width) {
  if (stack) return one_line_stack(*r.profile, r.profile->stacks()[r.id], width);
  if (r.id == kNoFrame) return "(no stack)";
  const auto& frame = r.profile->frames()[r.id];
  std::string location = function_location(frame);
  size_t room = location.empty() ? width : width - std::min(width / 2, location.size() + 3);
  return shorten(function_name(frame), room) +
         (location.empty() ? "" : " (" + location + ")");
}

void write_rows(const std::vector<DiffRow>& rows, bool stack, bool live, size_t top, size_t width, std::ostream& out) {
  constexpr size_t kNumber = 11;
  out << pad_left("change", kNumber) << pad_left("base", kNumber) << pad_left("new", kNumber) << "  "
      << (stack ? "stack (innermost first)" : "function") << "\n";
  for (size_t i = 0; i < rows.size() && i < top; i++) {
    const DiffValues& v = rows[i].values;
    out << pad_left(signed_bytes(v.growth(live)), kNumber) << pad_left(format_bytes(view_of(v, live, false).bytes), kNumber)
        << pad_left(format_bytes(view_of(v, live, true).bytes), kNumber) << "  "
        << row_name(rows[i], stack, width - 3 * kNumber - 2) << "\n";
  }
}

void write_json_values(JsonWriter& json, const DiffValues& v, bool has_live) {
  json.field("base_allocated_bytes", v.base_allocated.bytes);
  json.field("new_allocated_bytes", v.new_allocated.bytes);
  json.field("allocated_change_bytes", v.growth(false));
  json.field("base_allocated_count", v.base_allocated.count);
  json.field("new_allocated_count", v.new_allocated.count);
  if (!has_live) return;
  json.field("base_live_bytes", v.base_live.bytes);
  json.field("new_live_bytes", v.new_live.bytes);
  json.field("live_change_bytes", v.growth(true));
}

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

void write_diff_text(const Diff& d, size_t top, size_t width, std::ostream& out) {
  constexpr size_t kColumn = 14;
  out << "nmprof diff: " << d.new_file << " against " << d.base_file << "\n\n";
  out << pad_right("", 12) << pad_left("base", kColumn) << pad_left("new", kColumn) << "   change\n";
  auto line = [&](const char* what, const Totals& base, const Totals& now) {
    out << pad_right(what, 12) << pad_left("~" + format_bytes(base.bytes), kColumn)
        << pad_left("~" + format_bytes(now.bytes), kColumn) << "   " << change_text(base.bytes, now.bytes) << "\n";
  };
  line("allocated", d.totals.base_allocated, d.totals.new_allocated);
  if (d.has_live) line("live at end", d.totals.base_live, d.totals.new_live);
  const char* view = d.live ? "live" : "allocated";
  out << "\nTop " << std::min(top, d.stacks.size()) << " stacks by growth of " << view << " bytes:\n";
  write_rows(d.stacks, true, d.live, top, width, out);
  out << "\nTop " << std::min(top, d.functions.size()) << " functions by growth of " << view
      << " bytes they allocate directly:\n";
  write_rows(d.functions, false, d.live, top, width, out);
}

void write_diff_json(const Diff& d, size_t top, std::ostream& out) {
  JsonWriter json(out);
  json.begin_object();
  json.field("base_file", d.base_file);
  json.field("new_file", d.new_file);
  json.field("view", d.live ? "live" : "allocated");
  json.key("totals");
  json.begin_object();
  write_json_values(json, d.totals, d.has_live);
  json.end_object();
  for (bool stacks : {true, false}) {
    json.key(stacks ? "stacks" : "functions");
    json.begin_array();
    const auto& rows = stacks ? d.stacks : d.functions;
    for (size_t i = 0; i < rows.size() && i < top; i++) {
      const DiffRow& r = rows[i];
      json.begin_object();
      if (stacks) {
        json.key("frames");
        json.begin_array();
        for (uint32_t f : r.profile->stacks()[r.id].frames) json.value(function_name(r.profile->frames()[f]));
        json.end_array();
      } else {
        json.field("function", r.id == kNoFrame ? std::string() : function_name(r.profile->frames()[r.id]));
      }
      write_json_values(json, r.values, d.has_live);
      json.end_object();
    }
    json.end_array();
  }
  json.end_object();
  out << "\n";
}

void write_diff_collapsed(const Diff& d, Value value, std::ostream& out) {
  for (const DiffRow& r : d.stacks) {
    long long base = std::llround(collapsed_value(view_of(r.values, d.live, false), value));
    long long now = std::llround(collapsed_value(view_of(r.values, d.live, true), value));
    if (base || now) out << collapsed_stack(*r.profile, r.profile->stacks()[r.id]) << ' ' << base << ' ' << now << '\n';
  }
}

}  // namespace nmprof::report
