#include "cli/report/model/sample_filter.h"

#include <algorithm>
#include <charconv>
#include <regex>

#include "cli/report/model/report.h"
#include "cli/report/units.h"
#include "profile/frame_folding.h"

namespace nmprof::report {
namespace {

using profile::Profile;

std::vector<std::regex> compiled(const std::vector<std::string>& patterns) {
  std::vector<std::regex> regexes;
  for (const auto& p : patterns) regexes.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
  return regexes;
}

// The memo entry of `id`, grown as the profile adds frames, stacks and threads.
int8_t& memo(std::vector<int8_t>& known, uint32_t id) {
  if (id >= known.size()) known.resize(id + 1, -1);
  return known[id];
}

// Whether --thread `wanted` names the thread (by name or OS thread id).
bool names(const profile::Thread& t, const std::string& wanted) {
  return t.name == wanted || std::to_string(t.os_thread_id) == wanted;
}

// Throws when a --pid or --thread names nothing in the recording.
void check_named(const Profile& profile, const SampleFilter& filter) {
  for (int64_t pid : filter.pids) {
    if (std::any_of(profile.processes.begin(), profile.processes.end(), [pid](const auto& p) { return p.pid == pid; }))
      continue;
    std::string pids;
    for (const auto& p : profile.processes) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
    throw ReportError("no process " + std::to_string(pid) + " in the recording (it has " + pids + ")");
  }
  for (const auto& wanted : filter.threads)
    if (std::none_of(profile.threads().begin(), profile.threads().end(),
                     [&wanted](const auto& t) { return names(t, wanted); }))
      throw ReportError("no thread named or numbered '" + wanted + "' in the recording");
}

}  // namespace

bool SampleFilter::empty() const {
  return pids.empty() && threads.empty() && !from_nanos && !to_nanos && include.empty() && exclude.empty();
}

std::optional<int64_t> parse_offset(const std::string& text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < 0) return std::nullopt;
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  double scale = unit.empty() || unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "us" ? 1e3 : unit == "m" ? 60e9
               : unit == "h"                 ? 3600e9
                                             : 0;
  if (scale == 0 || value * scale > 9e18) return std::nullopt;
  return static_cast<int64_t>(value * scale);
}

std::string filter_text(const SampleFilter& f) {
  std::vector<std::string> parts;
  for (int64_t pid : f.pids) parts.push_back("pid " + std::to_string(pid));
  for (const auto& t : f.threads) parts.push_back("thread " + t);
  if (f.from_nanos) parts.push_back("from " + format_duration(*f.from_nanos));
  if (f.to_nanos) parts.push_back("to " + format_duration(*f.to_nanos));
  for (const auto& r : f.include) parts.push_back("through '" + r + "'");
  for (const auto& r : f.exclude) parts.push_back("not through '" + r + "'");
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text;
}

SampleSelection::StackMatcher::StackMatcher(const std::vector<std::string>& patterns) : regexes_(compiled(patterns)) {}

bool SampleSelection::StackMatcher::matches(const Profile& profile, uint32_t stack) {
  int8_t& known = memo(stacks_, stack);
  if (known < 0) {
    const auto& frames = profile.stacks()[stack].frames;
    known = std::any_of(frames.begin(), frames.end(), [&](uint32_t f) { return frame_matches(profile, f); }) ? 1 : 0;
  }
  return known == 1;
}

bool SampleSelection::StackMatcher::frame_matches(const Profile& profile, uint32_t frame) {
  int8_t& known = memo(frames_, frame);
  if (known < 0) {
    std::string name = profile::fold_name(profile.frames()[frame]);
    known = std::any_of(regexes_.begin(), regexes_.end(),
                        [&name](const std::regex& r) { return std::regex_search(name, r); })
                ? 1
                : 0;
  }
  return known == 1;
}

SampleSelection::SampleSelection(const SampleFilter& filter, const std::vector<ContextFilter>& tags,
                                 int64_t until_nanos)
    : filter_(filter), tags_(tags), until_nanos_(until_nanos), included_(filter.include), excluded_(filter.exclude) {}

bool SampleSelection::thread_selected(const Profile& profile, uint32_t thread) {
  if (filter_.threads.empty()) return true;
  int8_t& known = memo(threads_, thread);
  if (known < 0) {
    const auto& t = profile.threads()[thread];
    known = std::any_of(filter_.threads.begin(), filter_.threads.end(),
                        [&t](const std::string& wanted) { return names(t, wanted); });
  }
  return known == 1;
}

std::pair<int64_t, int64_t> SampleSelection::window(const Profile& profile) const {
  if (!filter_.from_nanos && !filter_.to_nanos) return {INT64_MIN, until_nanos_};
  int64_t start = recording_span(profile).start_nanos;
  return {filter_.from_nanos ? start + *filter_.from_nanos : INT64_MIN,
          std::min(filter_.to_nanos ? start + *filter_.to_nanos : INT64_MAX, until_nanos_)};
}

bool SampleSelection::keeps(const Profile& profile, const profile::Sample& sample) {
  if (!filter_.pids.empty() &&
      std::find(filter_.pids.begin(), filter_.pids.end(), profile.processes[sample.process].pid) == filter_.pids.end())
    return false;
  auto [from, to] = window(profile);
  return sample.time_nanos >= from && sample.time_nanos <= to && thread_selected(profile, sample.thread) &&
         (!included_.any() || included_.matches(profile, sample.stack)) &&
         !(excluded_.any() && excluded_.matches(profile, sample.stack)) && matches(profile, sample, tags_);
}

bool SampleSelection::keeps_free(const Profile& profile, uint32_t, int64_t time_nanos) {
  return time_nanos <= window(profile).second;
}

void SampleSelection::finish(Profile& profile) const {
  check_named(profile, filter_);
  auto [from, to] = window(profile);
  // The recording now spans --from to --to: durations, ages and quarters are of that window.
  profile.recorded_start_nanos = recording_start(profile);
  for (auto& p : profile.processes) {
    p.start_nanos = std::max(p.start_nanos, from);
    p.end_nanos = std::max(p.start_nanos, std::min(p.end_nanos, to));
  }
  if (profile.allocations().empty() && !(filter_.empty() && tags_.empty())) {
    std::string text = filter_text(filter_);
    if (!tags_.empty()) text += (text.empty() ? "" : ", ") + filters_text(tags_);
    throw ReportError("no samples match " + text);
  }
}

}  // namespace nmprof::report
