// What the hooks report to the agent. Only the sampled-allocation path is on the
// way of the host's allocations, and only for sampled ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/sampling/live_heap.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

// An allocation whose countdown crossed zero (p may be null if it failed), made by
// `allocator`. Returns p, so that hooks can tail-call it.
void* on_sampled_allocation(void* p, size_t size, jfr::schema::AllocatorKey allocator);
// A tracked block taken out of the live set before the call that frees it, so that
// its address cannot be reused (and sampled) before we have forgotten it.
struct TakenBlock {
  LiveHeap::Block block;
  uint64_t taken_at;  // ticks: the Free event's time
};
// The free path, after the filter said p may be tracked.
void on_tracked_free(void* p);
// realloc: take p out first; then report whether the call freed it (it did unless it
// failed with a non-zero size), which puts it back or records its free.
bool take_tracked_block(void* p, TakenBlock* out);
void settle_taken_block(const TakenBlock& taken, bool freed);

// dlopen/dlmopen/dlclose returned: the set of loaded libraries may have changed.
// deepbind: a dlopen with RTLD_DEEPBIND.
void on_libraries_changed(bool deepbind);
// dlsym found `name` at `found` (both non-null): returns what the caller gets.
void* on_symbol_lookup(const char* name, void* found);
// A call a runtime makes at a known point of its startup (sysconf, in PHP right after
// the engine made its heap): the agent may hook the runtime's own allocator now.
void on_runtime_checkpoint();
// A server's request ended (PHP). heap_reset: the runtime freed every block of its
// own heap (`allocator`) at once.
void on_runtime_request_end(jfr::schema::AllocatorKey allocator, bool heap_reset);
// The process image is about to be replaced (exec): the next image may record on.
void on_process_image_ending();
// The process is about to change its user id (a server's worker dropping root): its
// recording's file is opened first, while it can still be created where root put it.
void on_user_id_changing();
// The process is about to end without exit() (_exit, quick_exit): its recording ends.
void on_process_ending();

}  // namespace nmprof
