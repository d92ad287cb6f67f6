// What the hooks report to the agent. Only the sampled-allocation path is on the
// way of the host's allocations, and only for sampled ones.
#pragma once

#include <cstddef>

namespace nmprof {

// An allocation whose countdown crossed zero (p may be null if it failed). Returns p,
// so that hooks can tail-call it.
void* on_sampled_allocation(void* p, size_t size);
// dlopen/dlmopen/dlclose returned: the set of loaded libraries may have changed.
void on_libraries_changed(bool deepbind);
// The process image is about to be replaced, or the process to end without exit().
void on_process_image_ending();

}  // namespace nmprof
