// The labels pprof samples carry: the recording's static tags (--tag) and the
// context of the thread that allocated (nmprof.h): span ids as numeric labels
// "span_id" and "local_root_span_id", context attributes as string labels named as
// declared. What is unset is left out, so `go tool pprof -tags` shows only real values.
#pragma once

#include <vector>

#include "formats/pprof/pprof_profile.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

std::vector<pprof::Label> sample_labels(const profile::Profile& profile, const profile::Allocation& origin);

}  // namespace nmprof::report
