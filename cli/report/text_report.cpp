#include "cli/report/text_report.h"

#include <algorithm>
#include <cstdio>

#include "cli/report/frame_names.h"
#include "cli/report/text_layout.h"
#include "cli/report/units.h"

namespace nmprof::report {
namespace {

using profile::AllocationSource;
using profile::Profile;

constexpr size_t kLabelWidth = 12;     // "Allocated   "
constexpr size_t kMaxFramesShown = 8;  // per stack; the rest is counted
constexpr size_t kFrameIndent = 6;
constexpr size_t kLocationWidth = 24;     // library column of stack frames
constexpr size_t kMaxProcessesNamed = 3;  // per stack heading

bool multi_process(const Report& r) { return r.processes.size() > 1; }

// "~26,219 allocations", "~1 block".
std::string estimated_count_text(double count, bool live) {
  std::string n = format_count(count);
  return "~" + n + (live ? (n == "1" ? " block" : " blocks") : (n == "1" ? " allocation" : " allocations"));
}

void write_line(std::ostream& out, std::string_view label, const std::string& text) {
  write_wrapped(out, pad_right(std::string(label), kLabelWidth), text, kTextWidth);
}

// "Lost Samples 3, Agent Memory 3.00 MiB, ...", wrapped between counters.
void write_statistics(const Report& r, std::ostream& out) {
  std::string prefix = pad_right("Agent", kLabelWidth), line;
  for (size_t i = 0; i < r.statistics.size(); i++) {
    const auto& s = r.statistics[i];
    double v = static_cast<double>(s.value);
    std::string item =
        s.label + " " + (s.bytes ? format_bytes(v) : format_count(v)) + (i + 1 < r.statistics.size() ? "," : "");
    if (!line.empty() && prefix.size() + line.size() + 1 + item.size() > kTextWidth) {
      out << prefix << line << "\n";
      prefix = std::string(kLabelWidth, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + item;
  }
  if (!line.empty()) out << prefix << line << "\n";
}

void write_process_table(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  bool live = r.live.has_value();
  out << "\n"
      << pad_left("pid", 8) << pad_left("parent", 9) << pad_left("duration", 10) << pad_left("samples", 9)
      << pad_left("allocated", 11) << (live ? pad_left("live", 11) : "") << "  command\n";
  for (const auto& s : r.processes) {
    const auto& proc = p.processes[s.process];
    std::string line = pad_left(std::to_string(proc.pid), 8) + pad_left(std::to_string(proc.parent_pid), 9) +
                       pad_left(format_duration(proc.end_nanos - proc.start_nanos), 10) +
                       pad_left(format_count(static_cast<double>(s.allocated.samples)), 9) +
                       pad_left(format_bytes(s.allocated.bytes), 11);
    if (live) line += pad_left(s.live ? format_bytes(s.live->bytes) : "-", 11);
    line += "  ";
    out << line << cut_end(proc.command.empty() ? "?" : proc.command, kTextWidth - line.size()) << "\n";
  }
}

// An attached agent never saw what was allocated before: its live view is partial.
std::string live_scope_text(const Report& r) {
  for (const auto& process : r.processes) {
    const std::string* mode = r.profile->processes[process.process].setting("mode");
    if (mode && *mode == "attach") return " (of blocks allocated since the attach)";
  }
  return "";
}

void write_header(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  out << "nmprof report: " << r.options.file;
  if (multi_process(r)) out << " (" << r.processes.size() << " processes)";
  out << "\n";
  if (!multi_process(r) && !r.processes.empty()) {
    const auto& proc = p.processes[r.processes[0].process];
    if (!proc.command.empty()) write_line(out, "Command", proc.command);
    std::string about = proc.pid ? "pid " + std::to_string(proc.pid) : "pid unknown";
    if (proc.parent_pid) about += " (parent " + std::to_string(proc.parent_pid) + ")";
    if (!proc.host_name.empty()) about += " on " + proc.host_name;
    if (!proc.agent_version.empty()) about += ", nmprof " + proc.agent_version;
    write_line(out, "Process", about);
    if (const std::string* runtime = proc.setting("runtime")) write_line(out, "Runtime", *runtime);
  }
  if (!r.tags.empty()) {
    std::string tags;
    for (const auto& [key, value] : r.tags) tags += (tags.empty() ? "" : ", ") + key + "=" + value;
    write_line(out, "Tags", tags);
  }
  if (!r.options.filters.empty()) write_line(out, "Only", "samples with " + filters_text(r.options.filters));
  write_line(out, "Duration", format_duration(r.end_nanos - r.start_nanos));
  if (r.sampling_interval)
    write_line(out, "Sampling",
               *r.sampling_interval == 0
                   ? "every allocation"
                   : "one sample per " + format_bytes(*r.sampling_interval) + " allocated, on average");
  write_line(out, r.source == AllocationSource::JavaHeap ? "Java heap" : "Allocated",
             totals_text(r, r.allocated, false));
  // Only a runtime's own allocator (PHP's ZendMM) makes the split worth a line.
  if (r.by_allocator[static_cast<int>(profile::Allocator::ZendMM)].samples) {
    std::string split;
    for (int i = 0; i < profile::kAllocatorCount; i++)
      split += (i ? ", " : "") + std::string(profile::allocator_name(static_cast<profile::Allocator>(i))) + " ~" +
               format_bytes(r.by_allocator[i].bytes);
    write_line(out, "Allocators", split);
  }
  if (r.live) write_line(out, "Live", totals_text(r, r.live->totals, true) + " at the end" + live_scope_text(r));
  write_statistics(r, out);
  if (multi_process(r)) write_process_table(r, out);
  for (const auto& note : r.notes) write_wrapped(out, "warning: ", note, kTextWidth);
}

std::string age_text(const AgeSummary& age) {
  return "age median " + format_duration(age.median_nanos) + ", oldest " + format_duration(age.oldest_nanos);
}

std::string quarters_text(const AgeSummary& age) {
  std::string text;
  for (double share : age.share_by_quarter) {
    char buf[16];
    snprintf(buf, sizeof buf, "%.0f%%", share * 100);
    text += (text.empty() ? "" : " / ") + std::string(buf);
  }
  return text;
}

std::string processes_text(const Report& r, const StackRow& row) {
  const Profile& p = *r.profile;
  if (row.processes.size() == 1) return "pid " + std::to_string(p.processes[row.processes[0].first].pid);
  std::string text = "pids";
  for (size_t i = 0; i < row.processes.size() && i < kMaxProcessesNamed; i++)
    text += (i ? ", " : " ") + std::to_string(p.processes[row.processes[i].first].pid) + " " +
            format_percent(fraction(row.processes[i].second, row.totals.bytes));
  if (row.processes.size() > kMaxProcessesNamed)
    text += " +" + std::to_string(row.processes.size() - kMaxProcessesNamed) + " more";
  return text;
}

void write_frames(const Profile& p, const profile::Stack& stack, std::ostream& out) {
  const std::string indent(kFrameIndent, ' ');
  if (stack.frames.empty()) out << indent << "(no stack)\n";
  size_t shown = stack.frames.size() <= kMaxFramesShown ? stack.frames.size() : kMaxFramesShown - 1;
  for (size_t i = 0; i < shown; i++) {
    const auto& frame = p.frames()[stack.frames[i]];
    std::string location = frame_location(frame);
    if (location.empty()) {
      out << indent << shorten(frame_name(frame), kTextWidth - kFrameIndent) << "\n";
      continue;
    }
    size_t name_width = kTextWidth - kFrameIndent - 2 - kLocationWidth;
    out << indent << pad_right(shorten(frame_name(frame), name_width), name_width) << "  "
        << cut_end(location, kLocationWidth) << "\n";
  }
  if (shown < stack.frames.size()) out << indent << "... " << stack.frames.size() - shown << " more frames\n";
  if (stack.truncated) out << indent << "(truncated at the profiler's stack depth limit)\n";
}

void write_stacks(const Report& r, std::ostream& out) {
  bool live = r.options.live;
  if (r.stacks.empty()) {
    out << "\nNo stacks: nothing " << (live ? "is live at the end of the recording" : "was allocated") << "\n";
    return;
  }
  out << "\nTop " << r.stacks.size() << " stacks by " << (live ? "live" : "allocated") << " bytes (of "
      << format_count(static_cast<double>(r.stack_count)) << "; they hold " << format_percent(r.stacks_share) << ")\n";
  for (size_t i = 0; i < r.stacks.size(); i++) {
    const auto& s = r.stacks[i];
    const Totals& t = s.row.totals;
    std::string heading = "#" + std::to_string(i + 1) + "  " + format_bytes(t.bytes) + "  " +
                          format_percent(fraction(t.bytes, r.view_totals.bytes));
    if (r.source == AllocationSource::Native && r.estimates) heading += "  " + estimated_count_text(t.count, live);
    heading += "  " + counted(t.samples, "sample", "samples");
    if (s.age) heading += "  " + age_text(*s.age);
    if (multi_process(r)) heading += "  " + processes_text(r, s.row);
    out << cut_end(heading, kTextWidth) << "\n";
    write_frames(*r.profile, r.profile->stacks()[s.row.stack], out);
  }
}

// --by span, local-root-span or attribute:NAME: one line per value.
void write_contexts(const Report& r, std::ostream& out) {
  bool live = r.options.live;
  std::string key = context_key_name(r.options.context);
  out << "\nTop " << r.contexts.size() << " values of " << key << " by " << (live ? "live" : "allocated")
      << " bytes (of " << format_count(static_cast<double>(r.context_count)) << "; they hold "
      << format_percent(r.contexts_share) << ")\n";
  bool estimated = r.source == AllocationSource::Native && r.estimates;
  const char* count_title = !estimated ? "samples" : live ? "~blocks" : "~allocs";
  out << pad_left("bytes", 10) << pad_left("share", 8) << pad_left(count_title, 10) << pad_left("samples", 9)
      << "  value\n";
  for (const auto& c : r.contexts) {
    const Totals& t = c.totals;
    std::string line = pad_left(format_bytes(t.bytes), 10) +
                       pad_left(format_percent(fraction(t.bytes, r.view_totals.bytes)), 8) +
                       pad_left(format_count(estimated ? t.count : static_cast<double>(t.samples)), 10) +
                       pad_left(format_count(static_cast<double>(t.samples)), 9) + "  ";
    out << line << cut_end(c.value.empty() ? "(none)" : c.value, kTextWidth - line.size()) << "\n";
  }
}

void write_functions(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  if (r.functions.empty()) return;
  out << "\nTop " << r.functions.size() << " functions by " << (r.options.live ? "live" : "allocated")
      << " self bytes (of " << format_count(static_cast<double>(r.function_count)) << ")\n";
  // The self count: estimated allocations (blocks when live), or samples when there are no estimates.
  bool estimated = r.source == AllocationSource::Native && r.estimates;
  const char* count_title = !estimated ? "samples" : r.options.live ? "~blocks" : "~allocs";
  out << pad_left("self", 10) << pad_left("self%", 8) << pad_left(count_title, 9) << pad_left("total", 12)
      << pad_left("total%", 8) << "  function\n";
  auto percent = [&r](double bytes) { return format_percent(fraction(bytes, r.view_totals.bytes)); };
  for (const auto& f : r.functions) {
    double count = estimated ? f.self.count : static_cast<double>(f.self.samples);
    std::string line = pad_left(format_bytes(f.self.bytes), 10) + pad_left(percent(f.self.bytes), 8) +
                       pad_left(format_count(count), 9) + pad_left(format_bytes(f.total.bytes), 12) +
                       pad_left(percent(f.total.bytes), 8) + "  ";
    size_t room = kTextWidth - line.size();
    std::string name = "(no stack)";
    if (f.frame != kNoFrame) {
      const auto& frame = p.frames()[f.frame];
      std::string location = function_location(frame);
      if (location.empty()) {
        name = shorten(function_name(frame), room);
      } else {
        location = " [" + cut_end(location, kLocationWidth) + "]";
        name = shorten(function_name(frame), room - location.size()) + location;
      }
    }
    out << line << name << "\n";
  }
}

std::string live_command(const Report& r) { return "nmprof report " + shell_quote(r.options.file) + " --live"; }

// The age and free-pairing lines of the live view.
void write_live_details(const Report& r, std::ostream& out, std::string_view indent) {
  const LiveSummary& live = *r.live;
  write_wrapped(out, indent,
                age_text(live.age) + "; by quarter of the recording allocated in: " + quarters_text(live.age),
                kTextWidth);
  write_wrapped(out, indent,
                format_count(static_cast<double>(live.matched_frees)) + " frees matched sampled blocks, " +
                    format_count(static_cast<double>(live.unmatched_frees)) + " matched none",
                kTextWidth);
}

void write_live_section(const Report& r, std::ostream& out) {
  const LiveSummary& live = *r.live;
  out << "\nLive at the end of the recording: " << totals_text(r, live.totals, true) << "\n";
  write_live_details(r, out, "  ");
  if (live.top_stacks.empty()) return;
  out << "  top " << live.top_stacks.size() << " live stacks (" << format_percent(live.top_stacks_share)
      << " of live bytes):\n";
  write_compact_stacks(*r.profile, live.top_stacks, live.totals.bytes, out);
  out << "  more: " << live_command(r) << "\n";  // one line to copy, however long the path
}

}  // namespace

std::string totals_text(const Report& r, const Totals& t, bool live) {
  std::string samples = counted(t.samples, "sample", "samples");
  if (r.source == AllocationSource::JavaHeap) return format_bytes(t.bytes) + " in " + samples;
  if (!r.estimates) return format_bytes(t.bytes) + " sampled in " + samples;
  return "~" + format_bytes(t.bytes) + " in " + estimated_count_text(t.count, live) + " (" + samples + ")";
}

void write_compact_stacks(const Profile& profile, const std::vector<RankedStack>& stacks, double whole,
                          std::ostream& out) {
  for (const auto& s : stacks) {
    std::string head = "    " + pad_left(format_bytes(s.row.totals.bytes), 10) + "  " +
                       pad_left(format_percent(fraction(s.row.totals.bytes, whole)), 6) + "  ";
    out << head << one_line_stack(profile, profile.stacks()[s.row.stack], kTextWidth - head.size()) << "\n";
  }
}

void write_text_report(const Report& r, std::ostream& out) {
  write_header(r, out);
  if (r.options.live) {
    out << "\nLive memory\n";
    write_live_details(r, out, "  ");
  }
  if (r.options.by == ReportOptions::By::Stack) write_stacks(r, out);
  if (r.options.by == ReportOptions::By::Context) write_contexts(r, out);
  write_functions(r, out);
  if (r.live && !r.options.live) write_live_section(r, out);
}

}  // namespace nmprof::report
