// An nmprof profile as a Go-style heap profile: alloc_objects, alloc_space and,
// when frees were tracked, inuse_objects and inuse_space, as weighted estimates.
#pragma once

#include "cli/report/model/heap_view.h"
#include "formats/pprof/pprof_profile.h"
#include "profile/profile.h"

namespace nmprof::report {

// A view made by_context gives its samples the labels of their context
// (sample_labels.h); `live_first`: pprof opens on inuse_space instead of alloc_space.
pprof::Profile to_pprof(const profile::Profile& profile, const HeapView& view, bool live_first);

}  // namespace nmprof::report
