#include "cli/report/render/json_report.h"

#include "cli/report/model/frame_names.h"
#include "cli/report/model/sampling_error.h"
#include "cli/report/render/json_writer.h"
#include "cli/report/units.h"

namespace nmprof::report {
namespace {

// The file reported on: what run's recording became, or the file read (the last one
// of several: the chunks of a looping recording).
const std::string& reported_file(const Report& r) {
  static const std::string kNone;
  if (r.options.converted_to) return *r.options.converted_to;
  return r.options.files.empty() ? kNone : r.options.files.back();
}

using profile::AllocationSource;
using profile::Profile;

double seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

// The fields of an estimate: its samples, bytes and count, and the half-widths of their
// intervals at the report's confidence (`z`; 0 when every allocation was recorded).
void write_estimates(JsonWriter& json, const Totals& t, double z) {
  json.field("samples", t.samples);
  json.field("estimated_bytes", t.bytes);
  json.field("estimated_count", t.count);
  json.field("bytes_margin", bytes_margin(t, z));
  json.field("count_margin", count_margin(t, z));
}

void write_totals(JsonWriter& json, const Totals& t, double z) {
  json.begin_object();
  write_estimates(json, t, z);
  json.end_object();
}

void write_age(JsonWriter& json, const AgeSummary& age) {
  json.begin_object();
  json.field("median_seconds", seconds(age.median_nanos));
  json.field("oldest_seconds", seconds(age.oldest_nanos));
  json.key("share_by_quarter");
  json.begin_array();
  for (double share : age.share_by_quarter) json.value(share);
  json.end_array();
  json.end_object();
}

void write_frame(JsonWriter& json, const profile::Frame& frame) {
  json.begin_object();
  json.field("function", frame.function);
  json.field("container", frame.container);
  json.field("kind", profile::frame_kind_name(frame.kind));
  json.key("file");
  if (frame.file.empty())
    json.null();
  else
    json.value(frame.file);
  json.key("line");
  if (frame.line > 0)
    json.value(static_cast<int64_t>(frame.line));
  else
    json.null();
  json.field("inlined", frame.inlined);
  json.end_object();
}

void write_stacks(JsonWriter& json, const Report& r, const std::vector<RankedStack>& stacks, double of) {
  const Profile& p = *r.profile;
  json.begin_array();
  for (size_t i = 0; i < stacks.size(); i++) {
    const auto& s = stacks[i];
    const auto& stack = p.stacks()[s.row.stack];
    json.begin_object();
    json.field("rank", static_cast<uint64_t>(i + 1));
    write_estimates(json, s.row.totals, r.interval_z);
    json.field("share", fraction(s.row.totals.bytes, of));
    json.key("processes");
    json.begin_array();
    for (const auto& [process, bytes] : s.row.processes) {
      json.begin_object();
      json.field("pid", p.processes[process].pid);
      json.field("estimated_bytes", bytes);
      json.end_object();
    }
    json.end_array();
    if (s.age) {
      json.key("age");
      write_age(json, *s.age);
    }
    json.field("truncated", stack.truncated);
    json.key("frames");
    json.begin_array();
    for (uint32_t f : stack.frames) write_frame(json, p.frames()[f]);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

void write_functions(JsonWriter& json, const Report& r) {
  const Profile& p = *r.profile;
  json.begin_array();
  for (size_t i = 0; i < r.functions.size(); i++) {
    const auto& f = r.functions[i];
    json.begin_object();
    json.field("rank", static_cast<uint64_t>(i + 1));
    if (f.frame == kNoFrame) {
      json.key("function");
      json.null();
      json.key("container");
      json.null();
      json.key("kind");
      json.null();
    } else {
      const auto& frame = p.frames()[f.frame];
      json.field("function", frame.function);
      json.field("container", frame.container);
      json.field("kind", profile::frame_kind_name(frame.kind));
    }
    json.key("self");
    write_totals(json, f.self, r.interval_z);
    json.field("self_share", fraction(f.self.bytes, r.view_totals.bytes));
    json.key("total");
    write_totals(json, f.total, r.interval_z);
    json.field("total_share", fraction(f.total.bytes, r.view_totals.bytes));
    json.end_object();
  }
  json.end_array();
}

// "lostSamples" -> "lost_samples": the JFR field names, in the JSON's own style.
std::string snake_case(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

void write_statistics(JsonWriter& json, const std::vector<profile::Statistic>& statistics) {
  json.begin_object();
  for (const auto& s : statistics) json.field(snake_case(s.name), s.value);
  json.end_object();
}

void write_strings(JsonWriter& json, const std::vector<std::string>& strings) {
  json.begin_array();
  for (const auto& s : strings) json.value(s);
  json.end_array();
}

void write_tags(JsonWriter& json, const std::map<std::string, std::string>& tags) {
  json.begin_object();
  for (const auto& [key, value] : tags) json.field(key, value);
  json.end_object();
}

void write_processes(JsonWriter& json, const Report& r) {
  const Profile& p = *r.profile;
  json.begin_array();
  for (const auto& s : r.processes) {
    const auto& proc = p.processes[s.process];
    json.begin_object();
    json.field("pid", proc.pid);
    json.field("parent_pid", proc.parent_pid);
    json.field("command", proc.command);
    json.field("command_at_start", proc.command_at_start);
    json.field("executable", proc.executable);
    json.field("host_name", proc.host_name);
    json.field("agent_version", proc.agent_version);
    json.field("start_time_ns", proc.start_nanos);
    json.field("duration_seconds", seconds(proc.end_nanos - proc.start_nanos));
    json.field("confidence", r.options.gate.confidence);  // of every *_margin
  json.key("sampling_interval_bytes");
    if (auto interval = proc.sampling_interval())
      json.value(*interval);
    else
      json.null();
    json.field("live_tracking", proc.live_tracking());
    json.key("settings");
    // The agent's file= is where it wrote before nmprof merged and moved the recording
    // (a staging path under run): the file is the one reported.
    auto settings = proc.settings;
    if (settings.count("file")) settings["file"] = reported_file(r);
    write_tags(json, settings);
    json.key("tags");
    write_tags(json, proc.tags);
    json.key("statistics");
    write_statistics(json, proc.statistics);
    json.key("allocated");
    write_totals(json, s.allocated, r.interval_z);
    json.key("live");
    if (s.live)
      write_totals(json, *s.live, r.interval_z);
    else
      json.null();
    json.end_object();
  }
  json.end_array();
}

void write_contexts(JsonWriter& json, const Report& r) {
  json.begin_array();
  for (size_t i = 0; i < r.contexts.size(); i++) {
    const auto& c = r.contexts[i];
    json.begin_object();
    json.field("rank", static_cast<uint64_t>(i + 1));
    json.key("value");
    if (c.value.empty())
      json.null();
    else
      json.value(c.value);
    write_estimates(json, c.totals, r.interval_z);
    json.field("share", fraction(c.totals.bytes, r.view_totals.bytes));
    json.end_object();
  }
  json.end_array();
}

std::string by_name(const ReportOptions& options) {
  switch (options.by) {
    case ReportOptions::By::Stack: return "stack";
    case ReportOptions::By::Function: return "function";
    case ReportOptions::By::Context: break;
  }
  return context_key_name(options.context);
}

void write_live(JsonWriter& json, const Report& r) {
  const LiveSummary& live = *r.live;
  json.begin_object();
  write_estimates(json, live.totals, r.interval_z);
  json.key("lower_bound_bytes");  // null unless the tracking table overflowed
  if (live.lower_bound_bytes)
    json.value(*live.lower_bound_bytes);
  else
    json.null();
  json.field("matched_frees", live.matched_frees);
  json.field("unmatched_frees", live.unmatched_frees);
  json.field("frees_of_earlier_chunks", live.frees_of_earlier_chunks);
  json.key("age");
  write_age(json, live.age);
  if (!r.options.live) {
    json.field("top_stacks_share", live.top_stacks_share);
    json.key("top_stacks");
    write_stacks(json, r, live.top_stacks, live.totals.bytes);
  }
  json.end_object();
}

// A peek neighbour's function, or null for the root of stacks.
void write_function_of(JsonWriter& json, const Profile& p, uint32_t frame) {
  if (frame == kNoFrame)
    json.null();
  else
    write_frame(json, p.frames()[frame]);
}

void write_peeks(JsonWriter& json, const Report& r) {
  json.begin_array();
  for (const auto& row : r.peeks) {
    json.begin_object();
    json.key("function");
    write_function_of(json, *r.profile, row.frame);
    json.key("self");
    write_totals(json, row.self, r.interval_z);
    json.key("total");
    write_totals(json, row.total, r.interval_z);
    for (auto [name, neighbours] : {std::pair{"callers", &row.callers}, std::pair{"callees", &row.callees}}) {
      json.key(name);
      json.begin_array();
      for (const auto& n : *neighbours) {
        json.begin_object();
        json.key("function");
        write_function_of(json, *r.profile, n.frame);
        json.key("totals");
        write_totals(json, n.totals, r.interval_z);
        json.end_object();
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();
}

void write_series(JsonWriter& json, const std::vector<double>& values) {
  json.begin_array();
  for (double v : values) json.value(v);
  json.end_array();
}

void write_timeline(JsonWriter& json, const Timeline& t, double z) {
  json.begin_object();
  json.field("start_time_ns", t.start_nanos);
  json.field("step_seconds", seconds(t.bin_nanos));
  json.key("allocated_bytes");  // per step: divided by step_seconds, the allocation rate
  write_series(json, t.allocated_bytes);
  json.key("live_bytes");  // at the end of each step; null without live data
  if (t.live_bytes.empty()) {
    json.null();
  } else {
    write_series(json, t.live_bytes);
  }
  json.field("peak_live_bytes", t.peak_live_bytes);
  json.field("peak_live_bytes_margin", z * standard_error(t.peak_live_bytes_variance));
  json.field("peak_live_seconds", seconds(t.peak_live_nanos));
  json.end_object();
}

void write_json_values(JsonWriter& json, const DiffValues& v, bool has_live, double z) {
  json.field("base_allocated_bytes", v.base_allocated.bytes);
  json.field("new_allocated_bytes", v.new_allocated.bytes);
  json.field("allocated_change_bytes", v.growth(false));
  json.field("allocated_change_margin", v.growth_margin(false, z));
  json.field("allocated_change_significant", v.significant(false, z));
  json.field("base_allocated_count", v.base_allocated.count);
  json.field("new_allocated_count", v.new_allocated.count);
  if (!has_live) return;
  json.field("base_live_bytes", v.base_live.bytes);
  json.field("new_live_bytes", v.new_live.bytes);
  json.field("live_change_bytes", v.growth(true));
  json.field("live_change_margin", v.growth_margin(true, z));
  json.field("live_change_significant", v.significant(true, z));
}

}  // namespace

void write_json_report(const Report& r, std::ostream& out) {
  JsonWriter json(out);
  json.begin_object();
  json.field("schema", "nmprof-report");
  json.field("schema_version", static_cast<int64_t>(kJsonSchemaVersion));
  json.field("file", reported_file(r));
  json.key("files");
  json.begin_array();
  for (const std::string& file : r.options.files) json.value(file);
  json.end_array();
  json.field("view", r.peak ? "peak" : r.options.live ? "live" : "allocated");
  json.field("by", by_name(r.options));
  json.field("source", r.source == AllocationSource::Native ? "native" : "java-heap");
  json.field("estimates", r.estimates);
  json.field("start_time_ns", r.recording_start_nanos);
  json.field("duration_seconds", seconds(r.end_nanos - r.start_nanos));
  json.key("sampling_interval_bytes");
  if (r.sampling_interval)
    json.value(*r.sampling_interval);
  else
    json.null();
  json.key("tags");
  write_tags(json, r.tags);
  json.key("context_attributes");
  write_strings(json, r.profile->context_attributes);
  json.key("filters");
  json.begin_object();
  for (const auto& f : r.options.filters) json.field(f.key, f.value);
  json.end_object();
  json.field("selection", filter_text(r.options.samples));  // --pid, --thread, --from, --to, --include, --exclude
  json.key("warnings");
  write_strings(json, r.warnings);
  json.key("notes");
  write_strings(json, r.notes);
  json.key("statistics");
  write_statistics(json, r.statistics);
  json.key("processes");
  write_processes(json, r);
  json.key("allocated");
  write_totals(json, r.allocated, r.interval_z);
  json.key("allocators");
  json.begin_object();
  for (int i = 0; i < profile::kAllocatorCount; i++) {
    json.key(profile::allocator_name(static_cast<profile::Allocator>(i)));
    write_totals(json, r.by_allocator[i], r.interval_z);
  }
  json.end_object();
  json.key("live");
  if (r.live)
    write_live(json, r);
  else
    json.null();
  json.key("peak");  // with --peak
  if (r.peak) {
    json.begin_object();
    json.field("seconds", seconds(r.peak->nanos));
    json.key("live_at_end");
    write_totals(json, r.peak->live_at_end, r.interval_z);
    json.end_object();
  } else {
    json.null();
  }
  json.key("totals");
  write_totals(json, r.view_totals, r.interval_z);
  json.field("stack_count", static_cast<uint64_t>(r.stack_count));
  json.field("stacks_share", r.stacks_share);
  json.key("stacks");
  write_stacks(json, r, r.stacks, r.view_totals.bytes);
  json.field("context_count", static_cast<uint64_t>(r.context_count));
  json.field("contexts_share", r.contexts_share);
  json.key("contexts");
  write_contexts(json, r);
  json.field("function_count", static_cast<uint64_t>(r.function_count));
  json.key("functions");
  write_functions(json, r);
  json.key("peek");  // with --peek
  write_peeks(json, r);
  json.key("timeline");
  if (r.timeline)
    write_timeline(json, *r.timeline, r.interval_z);
  else
    json.null();
  json.end_object();
}

void write_diff_json(const Diff& d, size_t top, std::ostream& out) {
  JsonWriter json(out);
  json.begin_object();
  json.field("base_file", d.base_file);
  json.field("new_file", d.new_file);
  json.field("view", d.live ? "live" : "allocated");
  json.field("confidence", d.confidence);  // of every *_margin
  const double z = interval_z(d.confidence);
  json.key("totals");
  json.begin_object();
  write_json_values(json, d.totals, d.has_live, z);
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
      write_json_values(json, r.values, d.has_live, z);
      json.end_object();
    }
    json.end_array();
  }
  json.key("warnings");
  write_strings(json, d.warnings);
  json.end_object();
  out << "\n";
}

}  // namespace nmprof::report
