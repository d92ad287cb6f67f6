#include "cli/report/sample_filter.h"

#include <algorithm>
#include <charconv>
#include <regex>

#include "cli/report/report.h"
#include "cli/report/units.h"
#include "formats/profile/frame_folding.h"

namespace nmprof::report {
namespace {

using profile::Profile;

std::vector<std::regex> compiled(const std::vector<std::string>& patterns) {
  std::vector<std::regex> regexes;
  for (const auto& p : patterns) regexes.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
  return regexes;
}

// Per stack: whether one of its frames matches one of the regexes (memoized by frame).
class StackMatcher {
 public:
  StackMatcher(const Profile& profile, const std::vector<std::string>& patterns)
      : profile_(profile), regexes_(compiled(patterns)), frames_(profile.frames().size(), -1),
        stacks_(profile.stacks().size(), -1) {}

  bool matches(uint32_t stack) {
    int8_t& known = stacks_[stack];
    if (known < 0) {
      const auto& frames = profile_.stacks()[stack].frames;
      known = std::any_of(frames.begin(), frames.end(), [this](uint32_t f) { return frame_matches(f); }) ? 1 : 0;
    }
    return known == 1;
  }

 private:
  bool frame_matches(uint32_t frame) {
    int8_t& known = frames_[frame];
    if (known < 0) {
      std::string name = profile::fold_name(profile_.frames()[frame]);
      known = std::any_of(regexes_.begin(), regexes_.end(),
                          [&name](const std::regex& r) { return std::regex_search(name, r); })
                  ? 1
                  : 0;
    }
    return known == 1;
  }

  const Profile& profile_;
  std::vector<std::regex> regexes_;
  std::vector<int8_t> frames_, stacks_;
};

// The processes the filter keeps (all when it names none).
std::vector<bool> selected_processes(const Profile& profile, const SampleFilter& filter) {
  std::vector<bool> keep(profile.processes.size(), filter.pids.empty());
  for (int64_t pid : filter.pids) {
    bool found = false;
    for (size_t i = 0; i < profile.processes.size(); i++)
      if (profile.processes[i].pid == pid) keep[i] = found = true;
    if (!found) {
      std::string pids;
      for (const auto& p : profile.processes) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
      throw ReportError("no process " + std::to_string(pid) + " in the recording (it has " + pids + ")");
    }
  }
  return keep;
}

std::vector<bool> selected_threads(const Profile& profile, const SampleFilter& filter) {
  std::vector<bool> keep(profile.threads().size(), filter.threads.empty());
  for (const auto& wanted : filter.threads) {
    bool found = false;
    for (size_t i = 0; i < profile.threads().size(); i++) {
      const auto& t = profile.threads()[i];
      if (t.name == wanted || std::to_string(t.os_thread_id) == wanted) keep[i] = found = true;
    }
    if (!found) throw ReportError("no thread named or numbered '" + wanted + "' in the recording");
  }
  return keep;
}

int64_t recording_start(const Profile& profile) {
  int64_t start = INT64_MAX;
  for (const auto& p : profile.processes) start = std::min(start, p.start_nanos);
  return start == INT64_MAX ? 0 : start;
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

void filter_samples(Profile& profile, const SampleFilter& filter) {
  if (filter.empty()) return;
  std::vector<bool> processes = selected_processes(profile, filter);
  std::vector<bool> threads = selected_threads(profile, filter);
  int64_t start = recording_start(profile);
  int64_t from = filter.from_nanos ? start + *filter.from_nanos : INT64_MIN;
  int64_t to = filter.to_nanos ? start + *filter.to_nanos : INT64_MAX;
  StackMatcher included(profile, filter.include), excluded(profile, filter.exclude);
  std::erase_if(profile.allocations, [&](const profile::Allocation& a) {
    return !processes[a.process] || !threads[a.thread] || a.time_nanos < from || a.time_nanos > to ||
           (!filter.include.empty() && !included.matches(a.stack)) ||
           (!filter.exclude.empty() && excluded.matches(a.stack));
  });
  std::erase_if(profile.frees, [&](const profile::Free& f) { return !processes[f.process] || f.time_nanos > to; });
  // The recording now spans --from to --to: durations, ages and quarters are of that window.
  for (auto& p : profile.processes) {
    p.start_nanos = std::max(p.start_nanos, from);
    p.end_nanos = std::max(p.start_nanos, std::min(p.end_nanos, to));
  }
  if (profile.allocations.empty()) throw ReportError("no samples match " + filter_text(filter));
}

}  // namespace nmprof::report
