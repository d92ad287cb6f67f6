#include "cli/report/render/text_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "cli/report/model/frame_names.h"
#include "cli/report/model/sampling_error.h"
#include "cli/report/model/telling_frames.h"
#include "cli/report/render/text_layout.h"
#include "cli/report/units.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof::report {
namespace {

using profile::AllocationSource;
using profile::Profile;

constexpr size_t kLabelWidth = 12;  // "Allocated   "
constexpr size_t kFrameIndent = 6;
constexpr size_t kMaxProcessesNamed = 3;  // per stack heading

// ANSI styles, only when the report goes to a terminal that takes colour.
constexpr std::string_view kBold = "\033[1m", kDim = "\033[2m", kReset = "\033[0m";
std::string styled(const Report& r, std::string_view style, const std::string& text) {
  return r.options.colour ? std::string(style) + text + std::string(kReset) : text;
}

bool multi_process(const Report& r) { return r.processes.size() > 1; }

// What the ranking is of: "allocated", "live" (at the end) or "peak live" bytes.
const char* view_name(const Report& r) { return r.peak ? "peak live" : r.options.live ? "live" : "allocated"; }

// When the live view is of: "at the end", "at the peak, 2.10 s into the run"; of
// several processes, what each left at its own end, summed.
std::string live_moment_text(const Report& r) {
  if (r.peak) return "at the peak, " + format_duration(r.peak->nanos) + " into the run";
  return r.processes.size() > 1 ? "at the end (each process's, summed)" : "at the end";
}

// The frames of stacks shown together, which are told apart when they are overloads.
void append_frames(const Profile& p, uint32_t stack, std::vector<uint32_t>& frames) {
  const auto& ids = p.stacks()[stack].frames;
  frames.insert(frames.end(), ids.begin(), ids.end());
}

// "~26,219 allocations", "~1 block".
std::string estimated_count_text(double count, bool live) {
  std::string n = format_count(count);
  return "~" + n + (live ? (n == "1" ? " block" : " blocks") : (n == "1" ? " allocation" : " allocations"));
}

void write_line(const Report& r, std::ostream& out, std::string_view label, const std::string& text) {
  write_wrapped(out, pad_right(std::string(label), kLabelWidth), text, r.options.width);
}

// The agent's own counters in words: "25 samples (3 lost), 1,542 blocks tracked, 474 KiB
// of memory". What other lines say (live bytes, the interval, why the recording stopped,
// warnings) is left out, and so are zeros; another recorder's counters keep their labels.
std::string agent_text(const std::vector<profile::Statistic>& statistics) {
  // Worded below, or said by other lines.
  static const std::string_view kNotListed[] = {
      "samples",   "lostSamples", "trackedBlocks", "untrackedSamples", "agentMemory",         "trackingMemory",
      "liveBytes", "minInterval", "maxInterval",   "stoppedGrowing",   "undeclaredAttributes"};
  auto value = [&](std::string_view name) {
    auto it = std::find_if(statistics.begin(), statistics.end(), [&](const auto& s) { return s.name == name; });
    return it == statistics.end() ? 0 : static_cast<uint64_t>(std::max<int64_t>(it->value, 0));
  };
  auto aside = [](uint64_t n, const char* what) {
    return n ? " (" + format_count(static_cast<double>(n)) + what + ")" : std::string();
  };
  std::vector<std::string> parts;
  if (uint64_t samples = value("samples"))
    parts.push_back(counted(samples, "sample", "samples") + aside(value("lostSamples"), " lost"));
  if (uint64_t tracked = value("trackedBlocks"))
    parts.push_back(counted(tracked, "block", "blocks") + " tracked" +
                    aside(value("untrackedSamples"), " not: the table was full"));
  if (uint64_t memory = value("agentMemory") + value("trackingMemory"))
    parts.push_back(format_bytes(static_cast<double>(memory)) + " of memory");
  for (const auto& s : statistics) {
    double v = static_cast<double>(s.value);
    if (s.value && std::find(std::begin(kNotListed), std::end(kNotListed), s.name) == std::end(kNotListed))
      parts.push_back(s.label + " " + (s.bytes ? format_bytes(v) : format_count(v)));
  }
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
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
    out << line << cut_end(proc.command.empty() ? "?" : proc.title(), r.options.width - line.size()) << "\n";
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

// How stacks are simplified, and the option that shows them as recorded.
void write_stacks_line(const Report& r, std::ostream& out) {
  const auto& how = r.options.stacks;
  const auto& frames = r.profile->frames();
  bool java = std::any_of(frames.begin(), frames.end(), [](const auto& f) { return profile::is_java(f.kind); });
  std::string text;
  if (how.fold_defaults) text = "allocator wrappers folded (--keep-frames shows them)";
  if (java && how.merge_java_frame_types)
    text += (text.empty() ? "" : ", ") + std::string("Java tiers merged (--frame-types splits them)");
  if (!text.empty()) write_line(r, out, "Stacks", text);
}

void write_header(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  out << "nmprof report: " << r.options.converted_to.value_or(files_text(r.options.files));
  if (multi_process(r)) out << " (" << r.processes.size() << " processes)";
  out << "\n";
  if (!multi_process(r) && !r.processes.empty()) {
    const auto& proc = p.processes[r.processes[0].process];
    if (!proc.command.empty()) write_line(r, out, "Command", proc.title());  // one line: read escaped
    std::string about = proc.pid ? "pid " + std::to_string(proc.pid) : "pid unknown";
    if (proc.parent_pid) about += " (parent " + std::to_string(proc.parent_pid) + ")";
    if (!proc.host_name.empty()) about += " on " + proc.host_name;
    if (!proc.agent_version.empty()) about += ", nmprof " + proc.agent_version;
    write_line(r, out, "Process", about);
    if (const std::string* runtime = proc.setting("runtime")) write_line(r, out, "Runtime", *runtime);
  }
  if (!r.tags.empty()) {
    std::string tags;
    for (const auto& [key, value] : r.tags) tags += (tags.empty() ? "" : ", ") + key + "=" + value;
    write_line(r, out, "Tags", tags);
  }
  if (!r.options.filters.empty()) write_line(r, out, "Only", "samples with " + filters_text(r.options.filters));
  if (!r.options.samples.empty()) write_line(r, out, "Only", filter_text(r.options.samples));
  write_stacks_line(r, out);
  write_line(r, out, "Duration", format_duration(r.end_nanos - r.start_nanos));
  if (r.sampling_interval)
    write_line(r, out, "Sampling",
               *r.sampling_interval == 0
                   ? "every allocation"
                   : "one sample per " + format_bytes(*r.sampling_interval) + " allocated, on average");
  write_line(r, out, r.source == AllocationSource::JavaHeap ? "Java heap" : "Allocated",
             totals_text(r, r.allocated, false) + (r.peak ? " up to the peak" : ""));
  // Only a runtime's own allocator (PHP's ZendMM) makes the split worth a line.
  if (r.by_allocator[static_cast<int>(profile::Allocator::ZendMM)].samples) {
    std::string split;
    for (int i = 0; i < profile::kAllocatorCount; i++)
      split += (i ? ", " : "") + std::string(profile::allocator_name(static_cast<profile::Allocator>(i))) + " ~" +
               format_bytes(r.by_allocator[i].bytes);
    write_line(r, out, "Allocators", split);
  }
  if (r.live) {
    std::string end = r.peak ? "; ~" + format_bytes(r.peak->live_at_end.bytes) + " at the end" : "";
    write_line(r, out, "Live", live_text(r) + " " + live_moment_text(r) + end + live_scope_text(r));
  }
  if (std::string agent = agent_text(r.statistics); !agent.empty()) write_line(r, out, "Agent", agent);
  if (multi_process(r)) write_process_table(r, out);
  for (const auto& note : r.notes) write_wrapped(out, "warning: ", note, r.options.width);
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

// The frames of a stack shown: those up to --depth, and the frame that tells it apart
// from another stack shown (`telling`) when that one is further down.
std::vector<size_t> shown_frames(const Report& r, const profile::Stack& stack, TellingFrame telling) {
  size_t depth = r.options.depth ? r.options.depth : stack.frames.size();
  std::vector<size_t> rows(std::min(stack.frames.size(), depth));
  for (size_t i = 0; i < rows.size(); i++) rows[i] = i;
  if (telling.index >= rows.size() && telling.index < stack.frames.size()) rows.push_back(telling.index);
  return rows;
}

// `name_width`: the name column's, the same for every stack of the list (the library
// column follows it).
void write_frames(const Report& r, const profile::Stack& stack, const Overloads& overloads,
                  const std::vector<size_t>& rows, size_t name_width, std::ostream& out) {
  const Profile& p = *r.profile;
  const std::string indent(kFrameIndent, ' ');
  if (stack.frames.empty()) out << indent << "(no stack)\n";
  size_t next = 0;  // the frame after the last one written
  for (size_t i : rows) {
    if (i > next) out << indent << "... " << counted(i - next, "frame", "frames") << " ...\n";
    next = i + 1;
    const auto& frame = p.frames()[stack.frames[i]];
    bool overload = overloads.contains(stack.frames[i]);
    std::string location = frame_location(frame);
    if (location.empty()) {
      out << indent << fitted_frame_name(frame, r.options.width - kFrameIndent, overload) << "\n";
      continue;
    }
    out << indent << pad_right(fitted_frame_name(frame, name_width, overload), name_width) << "  "
        << styled(r, kDim, location) << "\n";
  }
  if (size_t hidden = stack.frames.size() - next)
    out << indent << "... " << counted(hidden, "more frame", "more frames") << " (--depth " << stack.frames.size()
        << (hidden == 1 ? " shows it)\n" : " shows them)\n");
  if (stack.truncated) out << indent << "(truncated at the profiler's stack depth limit)\n";
}

std::string intervals_hint(const Report& r) {
  std::string interval = r.sampling_interval ? " than " + format_bytes(*r.sampling_interval) : "";
  return "\u00b1: the " + confidence_text(r.options.gate.confidence) +
         " interval of an estimate, from the spread of its samples (--confidence); a smaller --nativemem" + interval +
         " narrows it.";
}

void write_stacks(const Report& r, std::ostream& out) {
  bool live = r.options.live;
  if (r.stacks.empty()) {
    out << "\nNo stacks: nothing " << (live ? "is live at the end of the recording" : "was allocated") << "\n";
    return;
  }
  out << "\nTop " << r.stacks.size() << " stacks by " << view_name(r) << " bytes (of "
      << format_count(static_cast<double>(r.stack_count)) << "; they hold " << format_percent(r.stacks_share) << ")\n";
  std::vector<uint32_t> frames, ids;
  for (const auto& s : r.stacks) {
    append_frames(*r.profile, s.row.stack, frames);
    ids.push_back(s.row.stack);
  }
  Overloads overloads(*r.profile, frames);
  std::vector<TellingFrame> telling = telling_frames(*r.profile, ids);
  // The library column is as wide as its longest name in the list (up to half the
  // line), so that it lines up from stack to stack; a longer name overflows it.
  std::vector<std::vector<size_t>> rows;
  size_t location_width = 0;
  for (size_t i = 0; i < r.stacks.size(); i++) {
    const profile::Stack& stack = r.profile->stacks()[ids[i]];
    rows.push_back(shown_frames(r, stack, telling[i]));
    for (size_t row : rows.back())
      location_width = std::max(location_width, frame_location(r.profile->frames()[stack.frames[row]]).size());
  }
  location_width = std::min(location_width, r.options.width / 2);
  size_t name_width = r.options.width - kFrameIndent - 2 - location_width;
  if (r.options.wide) {  // names are never shortened: the column is as wide as the longest
    size_t longest = 0;
    for (size_t i = 0; i < r.stacks.size(); i++) {
      const profile::Stack& stack = r.profile->stacks()[ids[i]];
      for (size_t row : rows[i]) {
        uint32_t frame = stack.frames[row];
        longest = std::max(longest, fitted_frame_name(r.profile->frames()[frame], name_width,
                                                      overloads.contains(frame)).size());
      }
    }
    name_width = std::min(name_width, longest);
  }
  bool margins = false;
  for (size_t i = 0; i < r.stacks.size(); i++) {
    const auto& s = r.stacks[i];
    const Totals& t = s.row.totals;
    std::string margin = margin_text(r, t);
    margins = margins || !margin.empty();
    std::string heading = "#" + std::to_string(i + 1) + "  " + format_bytes(t.bytes) + margin + "  " +
                          format_percent(fraction(t.bytes, r.view_totals.bytes));
    if (r.source == AllocationSource::Native && r.estimates) heading += "  " + estimated_count_text(t.count, live);
    heading += "  " + counted(t.samples, "sample", "samples");
    if (s.age) heading += "  " + age_text(*s.age);
    if (multi_process(r)) heading += "  " + processes_text(r, s.row);
    out << styled(r, kBold, cut_end(heading, r.options.width)) << "\n";
    write_frames(r, r.profile->stacks()[s.row.stack], overloads, rows[i], name_width, out);
  }
  if (margins) write_wrapped(out, "", intervals_hint(r), r.options.width);
}

// --by span, local-root-span or attribute:NAME: one line per value.
void write_contexts(const Report& r, std::ostream& out) {
  bool live = r.options.live;
  std::string key = context_key_name(r.options.context);
  out << "\nTop " << r.contexts.size() << " values of " << key << " by " << view_name(r)
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
    out << line << cut_end(c.value.empty() ? "(none)" : c.value, r.options.width - line.size()) << "\n";
  }
}

// A function's name and library in `room` columns; `none` for kNoFrame.
std::string function_text(const Profile& p, uint32_t frame_id, const Overloads& overloads, size_t room,
                          const char* none) {
  if (frame_id == kNoFrame) return none;
  bool overload = overloads.contains(frame_id);
  std::string name = listed_function_name(p, frame_id, overloads);
  std::string location = function_location(p.frames()[frame_id]);
  std::string shown = shorten(name, room, overload);
  if (location.empty()) return shown;
  // The location (a library, a PHP or Java file) gives way before the name: its
  // start first (directories), then all of it.
  constexpr std::string_view kOpen = " [", kCut = " [...", kClose = "]";
  if (shown.size() + kOpen.size() + location.size() + kClose.size() <= room)
    return shown + std::string(kOpen) + location + std::string(kClose);
  constexpr size_t kShortestTail = 6;  // less tells nothing
  if (shown.size() + kCut.size() + kShortestTail + kClose.size() > room) return shown;
  size_t start = location.size() - (room - shown.size() - kCut.size() - kClose.size());
  while (start < location.size() && (static_cast<unsigned char>(location[start]) & 0xC0) == 0x80) start++;  // UTF-8
  return shown + std::string(kCut) + location.substr(start) + std::string(kClose);
}

void write_peek(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  const char* view = view_name(r);
  std::vector<uint32_t> frames;
  for (const auto& row : r.peeks) {
    frames.push_back(row.frame);
    for (const auto* neighbours : {&row.callers, &row.callees})
      for (const auto& n : *neighbours) frames.push_back(n.frame);
  }
  std::erase(frames, kNoFrame);
  Overloads overloads(p, frames);
  out << "\nCallers and callees of functions matching '" << r.options.peek << "' (" << view << " bytes)\n";
  for (const auto& row : r.peeks) {
    std::string totals = "  total " + format_bytes(row.total.bytes) + " " +
                         format_percent(fraction(row.total.bytes, r.view_totals.bytes)) + ", self " +
                         format_bytes(row.self.bytes);
    out << "\n" << styled(r, kBold, function_text(p, row.frame, overloads, r.options.width - totals.size(), "")) << totals << "\n";
    for (auto [title, neighbours, none] : {std::tuple{"callers", &row.callers, "(root of the stack)"},
                                           std::tuple{"callees", &row.callees, ""}}) {
      if (neighbours->empty()) continue;
      out << "  " << title << ":\n";
      for (const auto& n : *neighbours) {
        std::string line = pad_left(format_bytes(n.totals.bytes), 12) +
                           pad_left(format_percent(fraction(n.totals.bytes, row.total.bytes)), 8) + "  ";
        out << line << function_text(p, n.frame, overloads, r.options.width - line.size(), none) << "\n";
      }
    }
  }
}

void write_functions(const Report& r, std::ostream& out) {
  const Profile& p = *r.profile;
  if (r.functions.empty()) return;
  out << "\nTop " << r.functions.size() << " functions by " << view_name(r)
      << (r.options.sort_by_total ? " total" : " self") << " bytes (of "
      << format_count(static_cast<double>(r.function_count)) << ")\n";
  // The self count: estimated allocations (blocks when live), or samples when there are no estimates.
  bool estimated = r.source == AllocationSource::Native && r.estimates;
  const char* count_title = !estimated ? "samples" : r.options.live ? "~blocks" : "~allocs";
  out << pad_left("self", 10) << pad_left("self%", 8) << pad_left(count_title, 9) << pad_left("total", 12)
      << pad_left("total%", 8) << "  function\n";
  auto percent = [&r](double bytes) { return format_percent(fraction(bytes, r.view_totals.bytes)); };
  std::vector<uint32_t> frames;
  for (const auto& f : r.functions)
    if (f.frame != kNoFrame) frames.push_back(f.frame);
  Overloads overloads(p, frames);
  for (const auto& f : r.functions) {
    double count = estimated ? f.self.count : static_cast<double>(f.self.samples);
    std::string line = pad_left(format_bytes(f.self.bytes), 10) + pad_left(percent(f.self.bytes), 8) +
                       pad_left(format_count(count), 9) + pad_left(format_bytes(f.total.bytes), 12) +
                       pad_left(percent(f.total.bytes), 8) + "  ";
    size_t room = r.options.width - line.size();
    out << line << function_text(p, f.frame, overloads, room, "(no stack)") << "\n";
  }
}

std::string live_command(const Report& r) { return "nmprof report " + shell_quote(r.options.files) + " --live"; }

// The age and free-pairing lines of the live view.
void write_live_details(const Report& r, std::ostream& out, std::string_view indent) {
  const LiveSummary& live = *r.live;
  if (live.totals.samples > 0)  // an empty live set has no ages to tell
    write_wrapped(out, indent,
                  age_text(live.age) + "; by quarter of the recording allocated in: " + quarters_text(live.age),
                  r.options.width);
  uint64_t of_earlier = live.frees_of_earlier_chunks;
  std::string earlier = of_earlier == 0 ? ""
                        : of_earlier == 1
                            ? ", 1 matched a block of an earlier chunk"
                            : ", " + format_count(static_cast<double>(of_earlier)) + " matched blocks of earlier chunks";
  write_wrapped(out, indent,
                format_count(static_cast<double>(live.matched_frees)) + " frees matched sampled blocks, " +
                    format_count(static_cast<double>(live.unmatched_frees)) + " matched none" + earlier,
                r.options.width);
}

void write_live_section(const Report& r, std::ostream& out) {
  const LiveSummary& live = *r.live;
  out << "\n";
  write_wrapped(out, "Live at the end of the recording: ", live_text(r), r.options.width);
  write_live_details(r, out, "  ");
  if (live.top_stacks.empty()) return;
  out << "  top " << live.top_stacks.size() << " live stacks (" << format_percent(live.top_stacks_share)
      << " of live bytes):\n";
  write_compact_stacks(r, live.top_stacks, live.totals.bytes, r.options.width, out);
  if (r.options.converted_to) return;  // no recording left to report on
  out << "  more: " << live_command(r) << "\n";  // one line to copy, however long the path
  if (r.timeline && ended_well_below_peak(live.totals.bytes, r.timeline->peak_live_bytes))
    out << "  peak: nmprof report " << shell_quote(r.options.files) << " --peak\n";
}

// The live series never sees the frees of untracked samples: past an overflow of the
// tracking table each of its values is an upper bound.
const char* kOverstatedText = " (at most: the tracking table overflowed)";

// Sparklines of live bytes and of the allocation rate, with the peak of each.
void write_timeline(const Report& r, std::ostream& out) {
  if (!r.timeline) return;
  const Timeline& t = *r.timeline;
  double seconds = static_cast<double>(t.bin_nanos) / 1e9;
  out << "\nOver time (" << t.allocated_bytes.size() << " steps of " << format_duration(t.bin_nanos) << ")\n";
  const std::string indent(13, ' ');
  size_t columns = r.options.width > indent.size() ? r.options.width - indent.size() : 1;
  if (!t.live_bytes.empty())
    out << "  live       " << sparkline(t.live_bytes, columns) << "\n"
        << indent << "peak ~" << format_bytes(t.peak_live_bytes) << " at " << format_duration(t.peak_live_nanos)
        << ", end ~" << format_bytes(t.live_bytes.back()) << (live_overstated(*r.profile) ? kOverstatedText : "") << "\n";
  auto peak = std::max_element(t.allocated_bytes.begin(), t.allocated_bytes.end());
  double total = 0;
  for (double b : t.allocated_bytes) total += b;
  out << "  allocated  " << sparkline(t.allocated_bytes, columns) << "\n"
      << indent << "~" << format_bytes(total / seconds / static_cast<double>(t.allocated_bytes.size()))
      << "/s on average, peak ~" << format_bytes(*peak / seconds) << "/s at "
      << format_duration(static_cast<int64_t>(peak - t.allocated_bytes.begin()) * t.bin_nanos +
                         nanos_since(r.recording_start_nanos, r.start_nanos))
      << "\n";
}

std::string signed_bytes(double bytes) {
  if (std::abs(bytes) < 0.5) return "0 B";
  return (bytes < 0 ? "-" : "+") + format_bytes(std::abs(bytes));
}

// "+35.0 MiB ± 6.10 MiB (+87.5%)", and "(not significant at 95%)" when the change lies
// within its interval.
std::string change_text(const DiffValues& v, bool live, double confidence) {
  double z = interval_z(confidence), base = v.view(live, false).bytes, now = v.view(live, true).bytes;
  std::string text = signed_bytes(now - base);
  if (double margin = v.growth_margin(live, z); margin >= 0.5) text += " \u00b1 " + format_bytes(margin);
  if (base > 0) text += " (" + std::string(now >= base ? "+" : "") + format_percent((now - base) / base) + ")";
  if (!v.significant(live, z)) text += " (not significant at " + confidence_text(confidence) + ")";
  return text;
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

// A change within its interval is shown in parentheses. Returns whether any was.
bool write_rows(const std::vector<DiffRow>& rows, bool stack, bool live, double z, size_t top, size_t width,
                std::ostream& out) {
  constexpr size_t kNumber = 11;
  bool insignificant = false;
  out << pad_left("change", kNumber) << pad_left("\u00b1", kNumber + 1) << pad_left("base", kNumber)
      << pad_left("new", kNumber) << "  " << (stack ? "stack (innermost first)" : "function") << "\n";
  for (size_t i = 0; i < rows.size() && i < top; i++) {
    const DiffValues& v = rows[i].values;
    std::string change = signed_bytes(v.growth(live));
    if (!v.significant(live, z)) {
      change = "(" + change + ")";
      insignificant = true;
    }
    double margin = v.growth_margin(live, z);
    out << pad_left(change, kNumber) << pad_left(margin >= 0.5 ? format_bytes(margin) : "0 B", kNumber)
        << pad_left(format_bytes(v.view(live, false).bytes), kNumber)
        << pad_left(format_bytes(v.view(live, true).bytes), kNumber) << "  "
        << row_name(rows[i], stack, width - 4 * kNumber - 2) << "\n";
  }
  return insignificant;
}

}  // namespace

std::string margin_text(const Report& r, const Totals& t) {
  double margin = bytes_margin(t, r.interval_z);
  if (r.source != AllocationSource::Native || !r.estimates || margin < 0.5) return "";
  return " \u00b1 " + format_bytes(margin);
}

std::string totals_text(const Report& r, const Totals& t, bool live) {
  std::string samples = counted(t.samples, "sample", "samples");
  if (r.source == AllocationSource::JavaHeap) return format_bytes(t.bytes) + " in " + samples;
  if (!r.estimates) return format_bytes(t.bytes) + " sampled in " + samples;
  return "~" + format_bytes(t.bytes) + margin_text(r, t) + " in " + estimated_count_text(t.count, live) + " (" +
         samples + ")";
}

std::string nothing_sampled_text(const Report& r) {
  // A recording cut short (its process killed, a limit reached) says nothing of what
  // was allocated after it.
  int64_t stopped = statistic(r.statistics, "stoppedGrowing");
  if (const char* why = jfr::schema::stop_reason_text(static_cast<uint64_t>(stopped)))
    return std::string("Nothing was sampled before the recording stopped (") + why +
           "): what was allocated after that is missing.";
  std::string interval = r.sampling_interval ? " (" + format_bytes(*r.sampling_interval) + ")" : "";
  return "Nothing was sampled: the program allocated too little for the sampling interval" + interval +
         "; a smaller --nativemem samples more.";
}

std::string peak_live_text(const Report& r) {
  const Timeline& t = *r.timeline;
  Totals peak;
  peak.bytes_variance = t.peak_live_bytes_variance;
  return "~" + format_bytes(t.peak_live_bytes) + margin_text(r, peak) + " at " + format_duration(t.peak_live_nanos) +
         " into the run" + (live_overstated(*r.profile) ? kOverstatedText : "");
}

std::string live_text(const Report& r) {
  const LiveSummary& live = *r.live;
  if (!live.lower_bound_bytes) return totals_text(r, live.totals, true) + (live_overstated(*r.profile) ? kOverstatedText : "");
  return "between ~" + format_bytes(*live.lower_bound_bytes) + " and ~" + format_bytes(live.totals.bytes) +
         " (the tracking table overflowed)";
}

void write_compact_stacks(const Report& r, const std::vector<RankedStack>& stacks, double whole, size_t width,
                          std::ostream& out) {
  const Profile& profile = *r.profile;
  std::vector<uint32_t> frames, ids;
  size_t margin_width = 0;  // a column as wide as the widest margin shown
  for (const auto& s : stacks) {
    append_frames(profile, s.row.stack, frames);
    ids.push_back(s.row.stack);
    margin_width = std::max(margin_width, margin_text(r, s.row.totals).size());
  }
  Overloads overloads(profile, frames);
  std::vector<TellingFrame> telling = telling_frames(profile, ids);
  for (size_t i = 0; i < stacks.size(); i++) {
    const RankedStack& s = stacks[i];
    // A margin's "±" is two bytes in one column; a row without one pads as many columns.
    std::string margin = margin_text(r, s.row.totals);
    std::string head = "    " + pad_left(format_bytes(s.row.totals.bytes), 10) +
                       (margin.empty() ? std::string(margin_width ? margin_width - 1 : 0, ' ')
                                       : pad_right(margin, margin_width)) +
                       "  " + pad_left(format_percent(fraction(s.row.totals.bytes, whole)), 6) + "  ";
    size_t columns = head.size() - (margin.empty() ? 0 : 1);
    out << head << one_line_stack(profile, profile.stacks()[s.row.stack], width - columns, overloads, telling[i])
        << "\n";
  }
}

void write_text_report(const Report& r, std::ostream& out) {
  write_header(r, out);
  if (r.allocated.samples == 0) {
    out << "\n";
    write_wrapped(out, "", nothing_sampled_text(r), r.options.width);
    return;
  }
  if (r.options.live) {
    out << "\nLive memory" << (r.peak ? " " + live_moment_text(r) : "") << "\n";
    write_live_details(r, out, "  ");
  }
  if (!r.peeks.empty()) {
    write_peek(r, out);
    return;
  }
  if (r.options.by == ReportOptions::By::Stack) write_stacks(r, out);
  if (r.options.by == ReportOptions::By::Context) write_contexts(r, out);
  write_functions(r, out);
  if (r.live && !r.options.live) write_live_section(r, out);
  write_timeline(r, out);
}

void write_diff_text(const Diff& d, size_t top, size_t width, std::ostream& out) {
  constexpr size_t kColumn = 14;
  out << "nmprof diff: " << d.new_file << " against " << d.base_file << "\n\n";
  out << pad_right("", 12) << pad_left("base", kColumn) << pad_left("new", kColumn) << "   change\n";
  auto line = [&](const char* what, bool live) {
    out << pad_right(what, 12) << pad_left("~" + format_bytes(d.totals.view(live, false).bytes), kColumn)
        << pad_left("~" + format_bytes(d.totals.view(live, true).bytes), kColumn) << "   "
        << change_text(d.totals, live, d.confidence) << "\n";
  };
  line("allocated", false);
  if (d.has_live) line("live at end", true);
  const char* view = d.live ? "live" : "allocated";
  double z = interval_z(d.confidence);
  out << "\nTop " << std::min(top, d.stacks.size()) << " stacks by growth of " << view << " bytes:\n";
  bool insignificant = write_rows(d.stacks, true, d.live, z, top, width, out);
  out << "\nTop " << std::min(top, d.functions.size()) << " functions by growth of " << view
      << " bytes they allocate directly:\n";
  insignificant = write_rows(d.functions, false, d.live, z, top, width, out) || insignificant;
  if (insignificant) out << "\n";
  if (insignificant)
    write_wrapped(out, "",
                  "(change): not significant, within its " + confidence_text(d.confidence) +
                      " interval (\u00b1, --confidence): it may be sampling alone.",
                  width);
}

}  // namespace nmprof::report
