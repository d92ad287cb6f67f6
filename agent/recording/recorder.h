// The sample store and JFR recording of one process: deduplicates stacks and
// threads, encodes events, and appends them with the pool entries they need to the
// output file when its buffer fills or a second has passed, so the file on disk is
// always complete up to the last append. All state is guarded by one spin lock,
// taken only on the sampled path.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/stacks/call_stack.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/writing/jfr_pools.h"
#include "agent/sampling/live_heap.h"
#include "agent/options.h"
#include "agent/writing/output_file.h"
#include "agent/writing/process_info.h"
#include "agent/sampling/rate_limit.h"
#include "agent/safety/spin_lock.h"
#include "agent/stacks/stack_table.h"
#include "agent/hooks/thread_state.h"
#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/writing/constant_pools.h"
#include "formats/jfr/writing/event_record.h"
#include "formats/jfr/nmprof_schema.h"
#include "include/nmprof.h"

namespace nmprof {

struct JavaThreadInfo;
using Settings = std::vector<std::pair<std::string, std::string>>;

class Recorder {
 public:
  // `rate`: where the statistics read the range of intervals used.
  Recorder(FrameResolver& resolver, const RateLimit& rate);

  // Starts recording (again, after finish()) into `path_template` (%p, %t expanded
  // for this process). max_tracked > 0 tracks frees of sampled blocks, up to that many
  // at once. create_file: write the file now, even before there is a sample.
  // tags describe the whole recording; every sample carries the thread's context
  // (nmprof.h) with one value per name of context_attributes.
  void start(const std::string& path_template, const Settings& settings, uint64_t max_tracked, bool create_file,
             const std::vector<Tag>& tags = {}, const std::vector<std::string>& context_attributes = {});
  bool recording() const { return active_; }
  // The size the output file stops growing at (0: none; kept across start()).
  void limit_file_size(uint64_t max_bytes) { file_.limit_size(max_bytes); }
  void record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size, float weight,
                         jfr::schema::AllocatorKey allocator = jfr::schema::kLibc);
  // Heap-live: a free of a block that may be tracked (the filter said so). Not
  // `recorded`: the block is forgotten without a Free event (it stays live in the file).
  void record_free(ThreadState& t, uintptr_t address, bool recorded = true);
  // realloc: takes a tracked block out of the live set (false if not tracked), then
  // either records its free or puts it back (when the realloc failed).
  bool take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at);
  void settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed);
  // Appends everything buffered to the file.
  void flush();
  // In a JVM: the sampled path stops flushing (Java frames can only be named from a
  // thread where JVMTI may be called), and the agent's flusher thread does it:
  // it asks which Java methods the pending stacks hold, looks them up without the
  // lock, then flushes resolving those frames with `java`.
  void set_background_flush(bool on);
  void unresolved_java_methods(std::vector<uint64_t>& out);
  // The Java threads whose entries the next flush writes (their names may be refreshed).
  void pending_java_threads(std::vector<JavaThreadInfo*>& out);
  void flush_resolving(FrameResolver& java);
  // The last flush: nothing is recorded after it.
  void finish();
  // From a signal handler: flushes unless this thread interrupted the recorder itself
  // (returns false then; the caller retries once the interrupted code has left).
  bool flush_from_signal();
  bool owned_by(int tid) const { return lock_.owner() == tid; }

  // fork(): the child records into a file of its own, under its own pid.
  void before_fork();
  void after_fork_in_parent();
  void after_fork_in_child();

  struct Status {
    bool recording;
    std::string file;
    uint64_t samples;
    uint64_t lost_samples;
    uint64_t tracked_blocks;
    uint64_t live_bytes;  // estimated
  };
  Status status();
  const std::string& output_path() const { return file_.path(); }
  long pid() const { return process_.pid; }
  uint64_t samples() const { return samples_; }

 private:
  void begin_generation();
  uint32_t thread_entry(ThreadState& t);
  void resolve_new_stack(uint32_t id);
  void resolve_java_frames(FrameResolver& java);
  void flush_locked(uint64_t now, bool defer_unresolved = false);
  void write_pending_pools(bool defer_unresolved);
  bool has_unresolved_frames(uint32_t stack);
  void append_prelude();
  void append_statistics(uint64_t now);
  void append_last(uint64_t now);
  void append_new_modules();  // nmprof.Module events for modules of newly written frames
  void maybe_flush(uint64_t now);
  void append_free(ThreadState& t, uintptr_t address, uint64_t ticks);
  void add_context(jfr::SmallRecord& r, const nmprof_context_block* context);
  uint64_t key(uint32_t id) const { return key_base_ | id; }
  size_t memory_bytes() const;

  struct ThreadEntry {
    int tid;
    std::string os_name;
    const JavaThreadInfo* java;  // null for threads that are not Java threads
  };

  FrameResolver& resolver_;
  const RateLimit& rate_;
  SpinLock lock_;
  bool active_ = false;
  bool background_flush_ = false;
  bool create_file_ = false;
  std::string path_template_;
  std::string start_time_text_;  // %t: formatted at start, since after fork() the time zone lock may be held
  Settings settings_;
  std::vector<Tag> tags_;
  std::vector<std::string> context_attributes_;
  ProcessInfo process_;
  uint32_t generation_ = 0;  // bumped per output file; pool entries carry the one they were written in
  // pid << 32, and the process image (exec) in the top bits: pool keys stay unique
  // when the chunks of several processes and images are joined (the JDK's reader
  // keeps the first entry of a key for all chunks).
  uint64_t key_base_ = 0;
  uint64_t last_flush_ = 0;
  uint64_t samples_ = 0;
  std::atomic<uint64_t> lost_samples_{0};  // also counted by threads that do not hold the lock

  JfrPools pools_;
  StackTable stacks_;
  LiveHeap* live_ = nullptr;  // null when frees are not tracked
  // What a Java frame is called when it must be written before the flusher named it
  // (the process ends without the JVM's shutdown, e.g. by a signal).
  uint32_t unresolved_java_method_ = 0;
  std::vector<ThreadEntry> threads_;
  std::vector<uint32_t> pending_stacks_;   // to be written with the next append
  std::vector<std::pair<std::string, std::string>> new_modules_;  // name, path; reused
  std::vector<uint32_t> pending_threads_;
  jfr::ConstantPools out_pools_;
  jfr::ByteBuffer events_;
  OutputFile file_;
};

}  // namespace nmprof
