// Which samples a report looks at beyond --tag: some processes of a multi-process
// recording (--pid), some threads (--thread), a time range (--from/--to, from the
// start of the recording), and stacks through (--include) or not through (--exclude)
// frames matching a regex. The selection is made while the recording is read (the
// profile keeps sums, not samples), so every output format (text, JSON, pprof,
// collapsed, HTML) and the timeline show the same selection.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <utility>
#include <string>
#include <vector>

#include "cli/report/model/context_rows.h"
#include "profile/profile.h"
#include "profile/sample_selector.h"

namespace nmprof::report {

struct SampleFilter {
  std::vector<int64_t> pids;
  std::vector<std::string> threads;  // a thread's name, or its OS thread id
  std::optional<int64_t> from_nanos, to_nanos;  // since the start of the recording
  std::vector<std::string> include, exclude;    // regexes searched in function names

  bool empty() const;
};

// "10s", "1.5s", "250ms", "2m", "1h"; a plain number is seconds. Nothing when malformed.
std::optional<int64_t> parse_offset(const std::string& text);

// "pid 12, thread worker, from 10 s to 20 s, through 'parse', not through 'test_'".
std::string filter_text(const SampleFilter& filter);

// Takes in the samples the filter and the --tag filters select, and the frees that
// can matter to them: not those after --to (so the live view is what was live at
// --to). Throws std::regex_error for a bad regex.
class SampleSelection : public profile::SampleSelector {
 public:
  // `until_nanos` (since the Unix epoch) ends the window where --to does, without
  // being one of the user's filters: the moment --peak reads the recording up to.
  SampleSelection(const SampleFilter& filter, const std::vector<ContextFilter>& tags, int64_t until_nanos = INT64_MAX);
  bool keeps(const profile::Profile& profile, const profile::Sample& sample) override;
  bool keeps_free(const profile::Profile& profile, uint32_t process, int64_t time_nanos) override;

  // Once the recording is read: narrows the processes' spans to the time window.
  // Throws ReportError when a thread or pid names nothing in the recording, or when
  // nothing was selected.
  void finish(profile::Profile& profile) const;

 private:
  class StackMatcher {
   public:
    explicit StackMatcher(const std::vector<std::string>& patterns);
    bool any() const { return !regexes_.empty(); }
    bool matches(const profile::Profile& profile, uint32_t stack);

   private:
    bool frame_matches(const profile::Profile& profile, uint32_t frame);
    std::vector<std::regex> regexes_;
    std::vector<int8_t> frames_, stacks_;  // memo: -1 unknown, 0 no, 1 yes
  };

  bool thread_selected(const profile::Profile& profile, uint32_t thread);
  // [from, to] in ns since the Unix epoch, from the start of the recording so far.
  std::pair<int64_t, int64_t> window(const profile::Profile& profile) const;

  SampleFilter filter_;
  std::vector<ContextFilter> tags_;
  int64_t until_nanos_;
  StackMatcher included_, excluded_;
  std::vector<int8_t> threads_;  // memo, as for stacks
};

}  // namespace nmprof::report
