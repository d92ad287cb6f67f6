// The labels pprof samples carry: the recording's static tags (--tag) and the
// context of the thread that allocated (nmprof.h): span ids as decimal string labels
// named as Pyroscope ("span_id") and Datadog ("local root span id") look for them,
// context attributes as string labels named as declared. What is unset is left out,
// so `go tool pprof -tags` shows only real values.
#pragma once

#include <vector>

#include "formats/pprof/pprof_profile.h"
#include "profile/profile.h"

namespace nmprof::report {

inline constexpr const char* kSpanLabel = "span_id";
inline constexpr const char* kLocalRootSpanLabel = "local root span id";

std::vector<pprof::Label> sample_labels(const profile::Profile& profile, const profile::Allocation& origin);

}  // namespace nmprof::report
