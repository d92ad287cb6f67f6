// What the hooks report to the agent. Only the sampled-allocation path is on the
// way of the host's allocations, and only for sampled ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/sampling/live_heap.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

// An allocation whose countdown crossed zero (p may be null if it failed), made by
// `allocator`. A realloc's block had `before` bytes: its countdown counted only the
// growth, and its block has been counted by `counted` bytes over its life (0: its
// size; see counted_over_life and allocation_hooks.h). `tracked`: the weight the
// block had if it was tracked (0: it was not), which its live weight goes on from
// (LiveHeap::resized_weight). Returns p, so that hooks can tail-call it.
void* on_sampled_allocation(void* p, size_t size, jfr::schema::AllocatorKey allocator, size_t before = 0,
                            size_t counted = 0, float tracked = 0);
// What a call that left a block of `before` bytes with `size` bytes allocated.
inline size_t growth(size_t before, size_t size) { return size > before ? size - before : 0; }
// The size a realloc to `size` is counted from, given its block's usable sizes before
// and after the call (0: unknown). Usable sizes round requests up, and the rounding
// was never counted: what the block grew by is the difference of the two, at most
// `size` (realloc(NULL, n) counts n, as malloc does).
inline size_t counted_from(size_t usable_before, size_t usable_after, size_t size) {
  if (usable_after == 0) return usable_before < size ? usable_before : size;
  size_t added = growth(usable_before, usable_after);
  return added < size ? size - added : 0;
}
// The bytes a block resized to `size` (counted from `before`) has been counted by over
// its life, as far as a realloc can tell for a block it finds untracked: its usable
// size before the call (at least what malloc counted), plus what the call added, at
// most its usable size after. A block this realloc samples is tracked with the odds
// of a sample of that many bytes; a tracked block goes on from its own weight
// (LiveHeap::resized_weight). 0 when its allocator's sizes are unknown: the realloc
// is then followed as a free and a new allocation of `size` bytes, tracked with the
// odds of that size.
inline size_t counted_over_life(size_t usable_before, size_t usable_after, size_t before, size_t size) {
  if (usable_after == 0) return 0;
  size_t counted = usable_before + growth(before, size);
  return counted < usable_after ? counted : usable_after;
}
// Whether a realloc counted from `before` to `size` may be sampled: not one that
// added nothing (with --nativemem 0 every countdown crosses), unless it allocated
// from nothing, as malloc(0) may be.
inline bool adds_bytes(size_t before, size_t size) { return size > before || before == 0; }
// A tracked block marked taken before the call that may free it, so that a block
// another thread makes at its address meanwhile is not taken for it.
struct TakenBlock {
  LiveHeap::Block block;
  uint64_t taken_at;  // ticks: the Free event's time
};
// The free path, after the filter said p may be tracked.
void on_tracked_free(void* p);
// realloc: mark p taken first; then report whether the call freed it (it did unless
// it failed with a non-zero size), which puts it back or records its free.
bool take_tracked_block(void* p, TakenBlock* out);
void settle_taken_block(const TakenBlock& taken, bool freed);
// realloc, not sampled, moved or resized the block, adding `added` bytes to what it
// was counted by: it stays tracked at `to` with its new size and the live weight
// LiveHeap::resized_weight gives (the odds of a block of `counted` bytes when it added
// nothing), or, given fewer odds than it had, only with those odds against its old ones.
void move_taken_block(const TakenBlock& taken, void* to, size_t size, size_t added, size_t counted);
// realloc in a heap no other thread allocates from (ZendMM's), after the call: p,
// tracked or not, grew where it was to `size` bytes, adding `added` to what it was
// counted by (`counted` over its life). False when it must be taken and moved instead
// (a runtime's shutdown, whose leftovers stay as they were; a block whose weight would
// grow).
bool grow_in_place(void* p, size_t size, size_t added, size_t counted);

// dlopen/dlmopen/dlclose returned: the set of loaded libraries may have changed.
// deepbind: a dlopen with RTLD_DEEPBIND.
void on_libraries_changed(bool deepbind);
// A dlopen left as the program made it (its caller matters) is under way: what it
// loads is patched at the agent's next write.
void on_libraries_loading_unseen();
// dlsym found `name` at `found` (both non-null): returns what the caller gets.
void* on_symbol_lookup(const char* name, void* found);
// A call a runtime makes at a known point of its startup (sysconf, in PHP right after
// the engine made its heap): the agent may hook the runtime's own allocator now.
void on_runtime_checkpoint();
// A server's request ended (PHP). heap_reset: the runtime freed every block of its
// own heap (`allocator`) at once.
void on_runtime_request_end(jfr::schema::AllocatorKey allocator, bool heap_reset);
// The process image is about to be replaced by `program` (exec): the next image may
// record on.
void on_process_image_ending(const char* program);
// The process is about to change its user id (a server's worker dropping root): its
// recording's file is opened first, while it can still be created where root put it.
void on_user_id_changing();
// The process is about to end without exit() (_exit, quick_exit): its recording ends.
void on_process_ending();
// The program is about to put itself under a seccomp filter (or strict mode), which
// may kill it for a system call it did not plan for: the recording ends here, and
// the agent makes no system call afterwards.
void on_seccomp_filter_coming();

}  // namespace nmprof
