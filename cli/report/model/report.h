// What `nmprof report` shows, computed once from a profile and then rendered as text
// or JSON, so both formats carry the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/report/model/aggregation.h"
#include "cli/report/model/ci_gate.h"
#include "cli/report/model/context_rows.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/model/peek.h"
#include "cli/report/model/sample_filter.h"
#include "cli/report/model/timeline.h"
#include "cli/report/output_format.h"
#include "cli/report/terminal.h"
#include "profile/profile.h"
#include "profile/stack_simplification.h"

namespace nmprof::report {

struct ReportOptions {
  enum class By { Stack, Function, Context };
  using Format = report::Format;
  // The recordings read, in time order: one, or the chunks of a looping recording
  // (profile::ProfileReader).
  std::vector<std::string> files;
  // run -o x.txt: the report names x.txt, what the recording became (a staging file,
  // removed after), and gives no "nmprof report FILE" command to copy.
  std::optional<std::string> converted_to;
  std::string output;     // empty: standard output
  std::string diff_base;  // --diff: the recording to compare with
  size_t top = 10;
  By by = By::Stack;
  std::optional<Format> format;  // unset: from the output's extension, else text
  Value value = Value::Bytes;    // of collapsed stacks
  bool live = false;  // rank what is live at the end instead of what was allocated
  bool peak = false;  // --peak: rank what was live at the moment of the highest live total (implies live)
  ContextKey context;                  // with By::Context
  std::vector<ContextFilter> filters;  // only samples matching all of them (--tag)
  SampleFilter samples;                 // --pid, --thread, --from, --to, --include, --exclude
  profile::StackSimplification stacks;  // --frame-types, --keep-frames, --fold
  Gate gate;                            // --fail-on-live, --fail-on-growth
  bool sort_by_total = false;           // --sort total: functions by total (pprof's -cum), not self bytes
  std::string peek;                     // --peek REGEX: callers and callees of matching functions
  size_t width = kDefaultTextWidth;     // columns of text: the terminal's, COLUMNS, or --wide
  bool wide = false;                    // --wide: never shorten names
  size_t depth = 8;                     // frames shown per stack in text; 0: all (--depth)
  bool colour = false;                  // ANSI colour in text: on a terminal, unless NO_COLOR
  bool quiet = false;                  // no progress line while reading
};

// Reads --by: stack, function, span, local-root-span or attribute:NAME. Returns an
// error message, or nothing and sets options.by (and options.context).
std::optional<std::string> parse_by(const std::string& text, ReportOptions& options);

struct ProcessSummary {
  uint32_t process = 0;  // index into Profile::processes
  Totals allocated;
  std::optional<Totals> live;
};

struct RankedStack {
  StackRow row;
  std::optional<AgeSummary> age;  // for live stacks
};

struct LiveSummary {
  Totals totals;
  // When the agent's tracking table overflowed (untrackedSamples > 0), the frees of
  // untracked samples were never seen and `totals` is only an upper bound; the
  // agent's own count of its tracked live bytes (liveBytes) is the lower one, at the
  // end only (none at the peak).
  std::optional<double> lower_bound_bytes;
  AgeSummary age;
  uint64_t matched_frees = 0;
  uint64_t unmatched_frees = 0;
  uint64_t frees_of_earlier_chunks = 0;  // a chunk of a looping recording: of blocks it got live
  std::vector<RankedStack> top_stacks;  // the short live section of an allocation report
  double top_stacks_share = 0;          // of the live bytes
};

// With --peak: the moment the live view is of.
struct PeakMoment {
  int64_t nanos = 0;   // since the start of the recording
  Totals live_at_end;  // of the whole recording, for comparison
};

struct Report {
  const profile::Profile* profile = nullptr;
  ReportOptions options;
  profile::AllocationSource source = profile::AllocationSource::Native;
  bool estimates = true;  // false when samples carried no weights
  double interval_z = 0;  // of the intervals shown, at options.gate.confidence (interval_z)
  int64_t start_nanos = 0;  // of the window reported (--from)
  int64_t end_nanos = 0;
  int64_t recording_start_nanos = 0;  // recording_start
  std::optional<uint64_t> sampling_interval;  // when all processes agree
  std::vector<ProcessSummary> processes;
  std::vector<profile::Statistic> statistics;  // summed over processes by name
  Totals allocated;
  // Native samples by the allocator that made them, indexed by profile::Allocator.
  Totals by_allocator[profile::kAllocatorCount];
  std::optional<LiveSummary> live;  // when the recording tracked frees
  std::optional<Timeline> timeline;  // allocation rate and live bytes over time
  std::optional<PeakMoment> peak;    // --peak: `live` and the view are of that moment

  // The ranking of the chosen view (allocated, or live with --live).
  Totals view_totals;
  std::vector<RankedStack> stacks;  // top N; empty with --by function
  double stacks_share = 0;          // of the view's bytes
  size_t stack_count = 0;           // distinct stacks in the view
  std::vector<FunctionRow> functions;
  size_t function_count = 0;
  std::vector<PeekRow> peeks;        // with --peek
  std::vector<ContextRow> contexts;  // top N with --by a context key
  double contexts_share = 0;         // of the view's bytes
  size_t context_count = 0;          // distinct values in the view
  std::map<std::string, std::string> tags;  // static tags of all processes

  std::vector<std::string> warnings;  // damage met while reading the file
  std::vector<std::string> notes;     // caveats about the numbers
};

// Throws ReportError when the profile has nothing to report in the requested view.
Report build_report(const profile::Profile& profile, const ReportOptions& options);
// From the earliest start of a process's recording to the latest end (0 to 0 without processes).
struct TimeRange {
  int64_t start_nanos = 0;
  int64_t end_nanos = 0;
};
TimeRange recording_span(const profile::Profile& profile);
// The earliest start of a process's recording, before --from moved it: what times
// (the peak's, JSON's start_time_ns) are told from.
int64_t recording_start(const profile::Profile& profile);
// The moment of the highest estimated live total of a recording read whole, since its
// start, and what was live at its end. Throws as live_peak does.
PeakMoment peak_moment(const profile::Profile& whole);
// --peak: the live view of `at_peak`, the recording read again up to the moment of the
// highest live total of `whole` (the same recording read whole), with the duration,
// timeline and live total at the end of `whole`.
Report build_peak_report(const profile::Profile& whole, const profile::Profile& at_peak, const ReportOptions& options);
// The moment of the highest estimated live total of a recording read whole, since the
// Unix epoch. Throws ReportError when there is no live view or nothing was ever live.
profile::TimeSeries::Peak live_peak(const profile::Profile& whole);
// Whether so little was live at the end, against the peak, that the peak deserves a
// look of its own: less than a quarter of it.
bool ended_well_below_peak(double live_at_end_bytes, double peak_bytes);
// The statistic `name` of `stats` (Report::statistics, a process's), 0 when absent.
int64_t statistic(const std::vector<profile::Statistic>& stats, const std::string& name);
// Whether a process's tracking table overflowed (untrackedSamples): the frees of the
// samples it could not track were never seen, so every live value is an upper bound.
bool live_overstated(const profile::Profile& profile);
// An nmprof recording without samples (its processes allocated too little for the
// interval): reported, with nothing in it.
bool nothing_sampled(const profile::Profile& profile);
// The samples a report covers: native ones when there are any; a JDK recording still
// gets a Java heap summary. Throws ReportError when there are no allocations (unless
// nothing_sampled).
profile::AllocationSource reported_source(const profile::Profile& profile);
// Throws ReportError saying why when there is no live view of the profile.
void check_live_view(const profile::Profile& profile);
// Whether the recording tracked frees, so that a live view can be computed.
bool has_live_data(const profile::Profile& profile);

struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Stacks in the short live section of an allocation report.
constexpr size_t kLiveSectionStacks = 3;
// Time bins of the timeline (a sparkline character each).
constexpr size_t kTimelineBins = 60;

}  // namespace nmprof::report
