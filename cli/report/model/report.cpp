#include "cli/report/model/report.h"

#include <algorithm>

#include "cli/report/model/heap_view.h"
#include "cli/report/units.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof::report {
namespace {

using profile::AllocationSource;
using profile::Profile;

// The first n rows, each with the age of its live samples when `live` is given.
std::vector<RankedStack> rank(const Profile& profile, const std::vector<StackRow>& rows, size_t n,
                              const std::vector<profile::LiveSample>* live) {
  std::vector<RankedStack> ranked;
  for (size_t i = 0; i < rows.size() && i < n; i++) ranked.push_back({rows[i], std::nullopt});
  if (!live) return ranked;
  std::vector<int> slot_of_stack(profile.stacks().size(), -1);
  for (size_t i = 0; i < ranked.size(); i++) slot_of_stack[ranked[i].row.stack] = static_cast<int>(i);
  std::vector<std::vector<profile::LiveSample>> members(ranked.size());
  for (const auto& sample : *live) {
    int slot = slot_of_stack[profile.allocations()[sample.allocation].stack];
    if (slot >= 0) members[slot].push_back(sample);
  }
  for (size_t i = 0; i < ranked.size(); i++) ranked[i].age = age_summary(profile, members[i]);
  return ranked;
}

double share(const std::vector<RankedStack>& stacks, double whole) {
  double bytes = 0;
  for (const auto& s : stacks) bytes += s.row.totals.bytes;
  return fraction(bytes, whole);
}

// How much a process's stoppedGrowing says of the whole recording: a limit it reached
// most, then an image that exec'd a program left unrecorded, then one cut short.
int weight_of_stop(int64_t reason) {
  switch (reason) {
    case jfr::schema::kGrowing:
    case jfr::schema::kBetweenRequests: return 0;
    case jfr::schema::kBeforeTheEnd: return 1;
    case jfr::schema::kExeced: return 2;
    default: return 3;
  }
}

// Why a process image's recording ended, as its last statistics say, where an image
// that exec'd counts as recorded to its end when the program it exec'd recorded on
// (a later image of the same pid).
int64_t stop_of(const Profile& profile, const profile::Process& p) {
  const profile::Statistic* s = p.statistic("stoppedGrowing");
  if (!s) return jfr::schema::kGrowing;
  // A chunk of run --loop that ends while its process runs on lost nothing.
  const std::string* chunk = p.setting(jfr::schema::kChunkSetting);
  if (s->value == jfr::schema::kBeforeTheEnd && chunk && *chunk == jfr::schema::kChunkRunsOn)
    return jfr::schema::kGrowing;
  if (s->value != jfr::schema::kExeced) return s->value;
  for (const auto& later : profile.processes)
    if (later.pid == p.pid && &later != &p && later.end_nanos >= p.end_nanos) return jfr::schema::kGrowing;
  return jfr::schema::kExeced;
}

std::vector<profile::Statistic> summed_statistics(const Profile& profile) {
  std::vector<profile::Statistic> sums;
  for (const auto& p : profile.processes) {
    for (profile::Statistic s : p.statistics) {
      if (s.name == "stoppedGrowing") s.value = stop_of(profile, p);
      auto it = std::find_if(sums.begin(), sums.end(), [&s](const auto& x) { return x.name == s.name; });
      if (it == sums.end())
        sums.push_back(s);
      else if (s.name == "minInterval")  // a range over processes, not a total
        it->value = std::min(it->value, s.value);
      else if (s.name == "maxInterval")
        it->value = std::max(it->value, s.value);
      else if (s.name == "stoppedGrowing")  // a reason, not a count: the first limit a process reached
        it->value = weight_of_stop(s.value) > weight_of_stop(it->value) ? s.value : it->value;
      else
        it->value += s.value;
    }
  }
  return sums;
}

// " (it has: route, tenant)", or " (it has none)".
std::string attributes_text(const Profile& profile) {
  std::string names;
  for (const auto& name : profile.context_attributes) names += (names.empty() ? "" : ", ") + name;
  return " (it has " + (names.empty() ? std::string("none") : names) + ")";
}

void add_notes(Report& r) {
  if (r.source == AllocationSource::JavaHeap)
    r.notes.push_back(
        "Java heap allocation samples (jdk.ObjectAllocationSample): bytes are the JDK's estimates, counts "
        "are numbers of samples");
  // A JDK recording read with nmprof's (report app.jfr jdk.jfr): the view is native.
  if (r.source == AllocationSource::Native &&
      std::any_of(r.profile->allocations().begin(), r.profile->allocations().end(),
                  [](const auto& a) { return a.source == AllocationSource::JavaHeap; }))
    r.notes.push_back(
        "Java heap allocation samples (jdk.ObjectAllocationSample) are left out of this native view; report "
        "their file on its own to see them");
  if (!r.estimates && r.source == AllocationSource::Native)
    r.notes.push_back(
        "samples carry no weights (not written by nmprof): totals are sums of sampled sizes, "
        "not estimates");
  if (int64_t lost = statistic(r.statistics, "lostSamples"); lost > 0)
    r.notes.push_back(counted(static_cast<uint64_t>(lost), "sample was", "samples were") +
                      " lost (the agent could not record them): totals are low");
  if (int64_t low = statistic(r.statistics, "minInterval"), high = statistic(r.statistics, "maxInterval");
      low != high)
    r.notes.push_back("the sampling interval varied from " + format_bytes(static_cast<double>(low)) + " to " +
                      format_bytes(static_cast<double>(high)) + " (--rate, or processes recorded with different intervals)");
  if (int64_t untracked = statistic(r.statistics, "untrackedSamples"); untracked > 0 && r.live)
    r.notes.push_back(counted(static_cast<uint64_t>(untracked), "sample was", "samples were") +
                      " not tracked (the tracking table was full, raise --maxtracked): their frees were missed, so "
                      "live bytes are overstated: they lie between the agent's count of its tracked blocks and the "
                      "upper bound shown, and stacks ranked by live bytes include blocks that were freed");
  if (int64_t undeclared = statistic(r.statistics, "undeclaredAttributes"); undeclared > 0)
    r.notes.push_back(counted(static_cast<uint64_t>(undeclared), "context attribute was", "context attributes were") +
                      " set under a name the recording did not declare" + attributes_text(*r.profile) +
                      ", and not recorded: declare the names with --context-attributes NAME,... when recording");
  int64_t stopped = statistic(r.statistics, "stoppedGrowing");
  bool per_process = stopped == jfr::schema::kBeforeTheEnd || stopped == jfr::schema::kExeced;
  if (const char* why = jfr::schema::stop_reason_text(static_cast<uint64_t>(stopped)); why && !per_process)
    r.notes.push_back(std::string("the recording stopped growing (") + why + "): samples after that are missing" +
                      (r.live ? ", and so are frees: blocks freed after it show as live" : ""));
  for (const auto& p : r.profile->processes) {
    int64_t stop = stop_of(*r.profile, p);
    if (stop == jfr::schema::kBeforeTheEnd || stop == jfr::schema::kExeced)
      r.notes.push_back("the recording of process " + std::to_string(p.pid) + " (" + p.title() + ") stopped early (" +
                        jfr::schema::stop_reason_text(static_cast<uint64_t>(stop)) + "): what it did later is missing");
  }
}

// The timeline's bins cover the window reported (--from, --to); its peak is told
// from the recording's start, as every time the report shows.
void tell_from_recording_start(Report& r) {
  if (r.timeline) r.timeline->peak_live_nanos += nanos_since(r.recording_start_nanos, r.start_nanos);
}

// Process rows, the common sampling interval, and whether every sample had a weight.
void describe_processes(const Profile& profile, const std::vector<uint32_t>& selected, Report& r) {
  TimeRange span = recording_span(profile);
  r.start_nanos = span.start_nanos;
  r.end_nanos = span.end_nanos;
  r.recording_start_nanos = recording_start(profile);
  std::vector<uint64_t> intervals;
  for (uint32_t i = 0; i < profile.processes.size(); i++) {
    const auto& p = profile.processes[i];
    r.processes.push_back({i, {}, std::nullopt});
    if (auto interval = p.sampling_interval()) intervals.push_back(*interval);
  }
  if (!intervals.empty() &&
      std::all_of(intervals.begin(), intervals.end(), [&](uint64_t v) { return v == intervals[0]; }))
    r.sampling_interval = intervals[0];
  for (uint32_t i : selected) {
    const auto& a = profile.allocations()[i];
    r.processes[a.process].allocated.add(a.allocated);
    r.by_allocator[static_cast<int>(a.allocator)].add(a.allocated);
    if (!profile.processes[a.process].weighted) r.estimates = false;
  }
  r.statistics = summed_statistics(profile);
}

void describe_live(const Profile& profile, const std::vector<uint32_t>& selected,
                   const std::vector<profile::LiveSample>& samples, const Aggregate& live_aggregate, Report& r) {
  LiveSummary& live = r.live.emplace();
  live.totals = live_aggregate.totals;
  live.age = age_summary(profile, samples);
  bool agent_counted = std::any_of(r.statistics.begin(), r.statistics.end(),
                                   [](const auto& s) { return s.name == "liveBytes"; });
  if (statistic(r.statistics, "untrackedSamples") > 0 && agent_counted)
    live.lower_bound_bytes =
        std::min(static_cast<double>(statistic(r.statistics, "liveBytes")), live.totals.bytes);
  live.matched_frees = profile.matched_frees();
  live.unmatched_frees = profile.unmatched_frees();
  live.frees_of_earlier_chunks = profile.frees_of_earlier_chunks();
  if (!r.options.live) {  // the short section of an allocation report
    live.top_stacks = rank(profile, live_aggregate.stacks, kLiveSectionStacks, &samples);
    live.top_stacks_share = share(live.top_stacks, live.totals.bytes);
  }
  for (auto& p : r.processes) p.live.emplace();
  for (uint32_t i : selected) r.processes[profile.allocations()[i].process].live->add(profile.allocations()[i].live);
}

}  // namespace

bool live_overstated(const Profile& profile) {
  return std::any_of(profile.processes.begin(), profile.processes.end(),
                     [](const auto& p) { return statistic(p.statistics, "untrackedSamples") > 0; });
}

int64_t statistic(const std::vector<profile::Statistic>& stats, const std::string& name) {
  for (const auto& s : stats)
    if (s.name == name) return s.value;
  return 0;
}

TimeRange recording_span(const Profile& profile) {
  TimeRange span{INT64_MAX, INT64_MIN};
  for (const auto& p : profile.processes) {
    span.start_nanos = std::min(span.start_nanos, p.start_nanos);
    span.end_nanos = std::max(span.end_nanos, p.end_nanos);
  }
  return profile.processes.empty() ? TimeRange{} : span;
}

int64_t recording_start(const Profile& profile) {
  return profile.recorded_start_nanos.value_or(recording_span(profile).start_nanos);
}

profile::TimeSeries::Peak live_peak(const Profile& whole) {
  check_live_view(whole);
  auto peak = whole.time_series().live_peak();
  if (!peak) throw ReportError("nothing was live at any time: every sampled block was freed as it was allocated");
  return *peak;
}

PeakMoment peak_moment(const Profile& whole) {
  return {nanos_since(recording_start(whole), live_peak(whole).time_nanos), heap_view(whole).live};
}

Report build_peak_report(const Profile& whole, const Profile& at_peak, const ReportOptions& options) {
  ReportOptions live = options;
  live.live = true;
  Report r = build_report(at_peak, live);
  if (r.live) r.live->lower_bound_bytes.reset();  // the agent's count of its blocks is of the end
  r.peak = peak_moment(whole);
  r.end_nanos = recording_span(whole).end_nanos;
  r.timeline = timeline(whole.time_series(), true, r.start_nanos, r.end_nanos, kTimelineBins);
  tell_from_recording_start(r);
  return r;
}

bool ended_well_below_peak(double live_at_end_bytes, double peak_bytes) { return live_at_end_bytes < peak_bytes / 4; }

std::optional<std::string> parse_by(const std::string& text, ReportOptions& options) {
  using By = ReportOptions::By;
  using Kind = ContextKey::Kind;
  const std::string attribute = "attribute:";
  if (text == "stack") {
    options.by = By::Stack;
  } else if (text == "function") {
    options.by = By::Function;
  } else if (text == "span" || text == "local-root-span") {
    options.by = By::Context;
    options.context = {text == "span" ? Kind::Span : Kind::LocalRootSpan, {}};
  } else if (text.starts_with(attribute) && text.size() > attribute.size()) {
    options.by = By::Context;
    options.context = {Kind::Attribute, text.substr(attribute.size())};
  } else {
    return "--by takes stack, function, span, local-root-span or attribute:NAME, not '" + text + "'";
  }
  return std::nullopt;
}

bool has_live_data(const Profile& profile) {
  return profile.matched_frees() + profile.unmatched_frees() + profile.frees_of_earlier_chunks() > 0 || std::any_of(profile.processes.begin(), profile.processes.end(),
                                               [](const auto& p) { return p.live_tracking(); });
}

bool nothing_sampled(const Profile& profile) {
  return profile.allocations().empty() &&
         std::any_of(profile.processes.begin(), profile.processes.end(),
                     [](const auto& p) { return !p.agent_version.empty(); });
}

AllocationSource reported_source(const Profile& profile) {
  const auto& allocations = profile.allocations();
  if (nothing_sampled(profile)) return AllocationSource::Native;
  if (allocations.empty())
    throw ReportError("no allocation events (profiler.Malloc or jdk.ObjectAllocationSample)");
  bool has_native = std::any_of(allocations.begin(), allocations.end(),
                                [](const auto& a) { return a.source == AllocationSource::Native; });
  return has_native ? AllocationSource::Native : AllocationSource::JavaHeap;
}

void check_live_view(const Profile& profile) {
  if (reported_source(profile) != AllocationSource::Native)
    throw ReportError("no live data: JDK allocation samples come without frees");
  if (!has_live_data(profile))
    throw ReportError("no live data: the recording has no frees (record with live tracking on)");
}

Report build_report(const Profile& profile, const ReportOptions& options) {
  Report r;
  r.profile = &profile;
  r.options = options;
  r.interval_z = interval_z(options.gate.confidence);
  r.warnings = profile.warnings;
  r.source = reported_source(profile);
  bool has_native = r.source == AllocationSource::Native;
  std::vector<uint32_t> selected;
  const auto& allocations = profile.allocations();
  for (uint32_t i = 0; i < allocations.size(); i++)
    if (allocations[i].source == r.source && matches(profile, allocations[i], options.filters)) selected.push_back(i);
  if (selected.empty() && !nothing_sampled(profile))
    throw ReportError("no samples match " + filters_text(options.filters));
  if (options.by == ReportOptions::By::Context && options.context.kind == ContextKey::Kind::Attribute &&
      std::find(profile.context_attributes.begin(), profile.context_attributes.end(), options.context.attribute) ==
          profile.context_attributes.end())
    throw ReportError("no context attribute '" + options.context.attribute + "' in the recording" +
                      attributes_text(profile));
  for (const auto& p : profile.processes) r.tags.insert(p.tags.begin(), p.tags.end());

  bool live_data = has_native && has_live_data(profile);
  if (options.live) check_live_view(profile);

  describe_processes(profile, selected, r);
  Aggregate allocated = aggregate(profile, selected, false);
  r.allocated = allocated.totals;
  std::vector<profile::LiveSample> live_samples;
  Aggregate live_aggregate;
  if (live_data) {
    live_samples = profile.live_samples();
    std::erase_if(live_samples, [&](const profile::LiveSample& s) {
      return !matches(profile, allocations[s.allocation], options.filters);
    });
    live_aggregate = aggregate(profile, selected, true);
    describe_live(profile, selected, live_samples, live_aggregate, r);
  }

  r.timeline = timeline(profile.time_series(), live_data, r.start_nanos, r.end_nanos, kTimelineBins);
  tell_from_recording_start(r);

  const Aggregate& view = options.live ? live_aggregate : allocated;
  r.view_totals = view.totals;
  r.stack_count = view.stacks.size();
  r.function_count = view.functions.size();
  if (options.by == ReportOptions::By::Stack) {
    r.stacks = rank(profile, view.stacks, options.top, options.live ? &live_samples : nullptr);
    r.stacks_share = share(r.stacks, view.totals.bytes);
  }
  if (options.by == ReportOptions::By::Context) {
    r.contexts = by_context(profile, selected, options.context, options.live);
    r.context_count = r.contexts.size();
    if (r.contexts.size() > options.top) r.contexts.resize(options.top);
    double bytes = 0;
    for (const auto& c : r.contexts) bytes += c.totals.bytes;
    r.contexts_share = fraction(bytes, view.totals.bytes);
  }
  r.functions = view.functions;
  if (options.sort_by_total)
    std::stable_sort(r.functions.begin(), r.functions.end(),
                     [](const FunctionRow& x, const FunctionRow& y) { return x.total.bytes > y.total.bytes; });
  if (r.functions.size() > options.top) r.functions.resize(options.top);
  if (!options.peek.empty()) {
    r.peeks = peek(profile, view.stacks, options.peek, options.top);
    if (r.peeks.empty()) throw ReportError("no function matches --peek '" + options.peek + "'");
  }
  add_notes(r);
  return r;
}

}  // namespace nmprof::report
