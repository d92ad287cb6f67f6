#include "cli/report/render/flame_graph.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/report/model/heap_view.h"
#include "cli/report/model/sampling_error.h"
#include "cli/report/render/flame_graph_chart.h"
#include "cli/report/render/flame_graph_page.h"
#include "cli/report/render/flame_graph_stacks.h"
#include "cli/report/render/json_writer.h"
#include "cli/report/units.h"

namespace nmprof::report {
namespace {

// Inside <script>, "</script" ends the element and "<!--" followed by "<script" puts
// the parser where "</script>" no longer does (the page goes blank); U+2028 and
// U+2029 end a line in older script parsers. These characters can only be inside the
// JSON's strings (recorded names, paths, the command line), where \uXXXX means the same.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); i++) {
    char c = json[i];
    if (c == '<' || c == '>' || c == '&') {
      out += c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026";
    } else if (c == '\xE2' && json.compare(i + 1, 2, "\x80\xA8") == 0) {
      out += "\\u2028";
      i += 2;
    } else if (c == '\xE2' && json.compare(i + 1, 2, "\x80\xA9") == 0) {
      out += "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

int64_t rounded(double v) { return std::isfinite(v) ? std::llround(v) : 0; }

// The page's rows: a node of the tree where stacks end, with its values in each column
// (allocated, live, ...).
class Rows {
 public:
  explicit Rows(std::vector<std::string> columns) : columns_(std::move(columns)) {}

  // The row of `stack` of `profile`.
  uint32_t row(const profile::Profile& profile, uint32_t stack) {
    uint32_t node = tree_.add(profile, stack);
    auto [it, added] = row_of_node_.try_emplace(node, static_cast<uint32_t>(nodes_.size()));
    if (added) {
      nodes_.push_back(node);
      values_.emplace_back(columns_.size());
    }
    return it->second;
  }
  void add(uint32_t row, size_t column, const Totals& totals) { values_[row][column].add(totals); }
  size_t size() const { return nodes_.size(); }

  // "columns", "rows" (flat: node, then bytes, count and the variance of bytes per
  // column: variances add up the tree as bytes do) and the tree.
  void write(JsonWriter& json) const {
    json.key("columns");
    json.begin_array();
    for (const auto& c : columns_) json.value(c);
    json.end_array();
    json.key("rows");
    json.begin_array();
    for (size_t r = 0; r < nodes_.size(); r++) {
      json.value(static_cast<int64_t>(nodes_[r]));
      for (const Totals& t : values_[r]) {
        json.value(rounded(t.bytes));
        json.value(rounded(t.count));
        json.value(rounded(t.bytes_variance));
      }
    }
    json.end_array();
    tree_.write(json);
  }

 private:
  std::vector<std::string> columns_;
  StackTree tree_;
  std::unordered_map<uint32_t, uint32_t> row_of_node_;
  std::vector<uint32_t> nodes_;
  std::vector<std::vector<Totals>> values_;
};

void write_page(const std::string& data, std::ostream& out) {
  out << kFlameGraphPageStart << script_safe(data) << kFlameGraphPageEnd;
}

// "pid 1234, 12.3 s, a sample per 512 KiB on average".
std::string about_text(const profile::Profile& profile) {
  TimeRange span = recording_span(profile);
  std::string text = profile.processes.size() == 1 ? "pid " + std::to_string(profile.processes[0].pid)
                                                   : std::to_string(profile.processes.size()) + " processes";
  text += ", " + format_duration(span.end_nanos - span.start_nanos);
  if (!profile.processes.empty())
    if (auto interval = profile.processes[0].sampling_interval(); interval && *interval)
      text += ", a sample per " + format_bytes(static_cast<double>(*interval)) + " on average";
  return text;
}

}  // namespace

void write_flame_graph(const profile::Profile& profile, const profile::Profile* at_peak, const ReportOptions& options,
                       std::ostream& out) {
  HeapView view = heap_view(profile);
  std::vector<std::string> columns = {"allocated"};
  if (view.has_live) columns.push_back("live");
  if (at_peak) columns.push_back("peak");
  Rows rows(columns);
  std::vector<uint32_t> row_of_stack(profile.stacks().size(), Chart::kNoRow);
  for (const auto& s : view.stacks) {
    uint32_t row = rows.row(profile, s.stack);
    row_of_stack[s.stack] = row;
    rows.add(row, 0, s.allocated);
    if (view.has_live) rows.add(row, 1, s.live);
  }
  std::optional<profile::TimeSeries::Peak> peak;
  if (at_peak) {
    peak = live_peak(profile);
    for (const auto& s : heap_view(*at_peak).stacks) rows.add(rows.row(*at_peak, s.stack), columns.size() - 1, s.live);
  }
  std::vector<uint32_t> row_of_allocation;
  for (const auto& a : profile.allocations())
    row_of_allocation.push_back(a.source == view.source ? row_of_stack[a.stack] : Chart::kNoRow);
  Chart chart(profile, row_of_allocation, view.has_live);

  const char* opens_on = options.peak && at_peak                                               ? "peak"
                         : options.live || options.peak                                        ? "live"
                         : peak && ended_well_below_peak(view.live.bytes, peak->live_bytes) ? "peak"
                                                                                              : "allocated";
  std::ostringstream data;
  JsonWriter json(data, true);
  json.begin_object();
  json.field("title", profile.processes.empty() ? std::string("nmprof") : profile.processes[0].title());
  json.field("about", about_text(profile));
  json.field("diff", false);
  json.field("view", opens_on);
  json.field("interval_z", interval_z(options.gate.confidence));  // tooltips' ±
  json.field("confidence", confidence_text(options.gate.confidence));
  // Counts are numbers of samples, not estimates: Java heap samples, or unweighted ones.
  bool sampled = view.source == profile::AllocationSource::JavaHeap ||
                 std::any_of(profile.processes.begin(), profile.processes.end(), [](const auto& p) { return !p.weighted; });
  json.field("counts", sampled ? "samples" : "estimates");
  // The chart's live line, its peak and the live column are upper bounds then.
  if (view.has_live && live_overstated(profile)) json.field("live_overstated", true);
  if (peak) {
    json.key("peak");
    json.begin_object();
    json.field("at", nanos_since(recording_span(profile).start_nanos, peak->time_nanos));
    json.field("bytes", rounded(peak->live_bytes));
    json.end_object();
  }
  rows.write(json);
  if (!chart.empty()) chart.write(json, rows.size());
  json.end_object();
  write_page(data.str(), out);
}

void write_diff_flame_graph(const Diff& diff, std::ostream& out) {
  std::vector<std::string> columns = {"allocated", "base allocated"};
  if (diff.has_live) columns = {"allocated", "live", "base allocated", "base live"};
  Rows rows(columns);
  for (const DiffRow& r : diff.stacks) {
    uint32_t row = rows.row(*r.profile, r.id);
    const DiffValues& v = r.values;
    rows.add(row, 0, v.new_allocated);
    rows.add(row, columns.size() / 2, v.base_allocated);
    if (!diff.has_live) continue;
    rows.add(row, 1, v.new_live);
    rows.add(row, 3, v.base_live);
  }
  std::ostringstream data;
  JsonWriter json(data, true);
  json.begin_object();
  json.field("title", diff.new_file + " against " + diff.base_file);
  json.field("about", std::string("widths: ") + diff.new_file + "; colours: the change from " + diff.base_file);
  json.field("diff", true);
  json.field("interval_z", interval_z(diff.confidence));
  json.field("confidence", confidence_text(diff.confidence));
  json.field("view", diff.live ? "live" : "allocated");
  rows.write(json);
  json.end_object();
  write_page(data.str(), out);
}

}  // namespace nmprof::report
