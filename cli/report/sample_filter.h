// Which samples a report looks at beyond --tag: some processes of a multi-process
// recording (--pid), some threads (--thread), a time range (--from/--to, from the
// start of the recording), and stacks through (--include) or not through (--exclude)
// frames matching a regex. It removes the others from the profile, so every output
// format (text, JSON, pprof, collapsed, HTML) shows the same selection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/profile/profile.h"

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

// Drops the allocations the filter does not select, and the frees that cannot matter
// to them: those of other processes, and those after --to (so the live view is what
// was live at --to). Throws ReportError when a thread or pid names nothing in the
// recording, std::regex_error for a bad regex.
void filter_samples(profile::Profile& profile, const SampleFilter& filter);

}  // namespace nmprof::report
