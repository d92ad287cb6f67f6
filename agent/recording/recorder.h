// The sample store and JFR recording of one process. Sampling threads encode their
// events into stripes (sample_stripes.h) and find stacks in a table that is
// lock-free for known stacks, so they do not wait for each other. A writer (a
// background thread of the agent's, or the JVM's flusher) takes what the stripes
// hold, names the frames of new stacks, and appends it all with the pool entries it
// needs to the output file when a stripe fills or a second has passed, so the file
// on disk is always complete up to the last append. The writer's state is guarded
// by a lock no sampling thread takes.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/hooks/thread_state.h"
#include "agent/options.h"
#include "agent/recording/attribute_values.h"
#include "agent/recording/sample_stripes.h"
#include "agent/safety/spin_lock.h"
#include "agent/sampling/live_heap.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/call_stack.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/stacks/stack_table.h"
#include "agent/writing/jfr_pools.h"
#include "agent/writing/output_file.h"
#include "agent/writing/process_info.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/writing/constant_pools.h"
#include "include/nmprof.h"

namespace nmprof {

struct JavaThreadInfo;
using Settings = std::vector<std::pair<std::string, std::string>>;

class Recorder {
 public:
  // `rate`: where the statistics read the range of intervals used.
  Recorder(FrameResolver& resolver, const RateLimit& rate);
  // The agent's recorder lives as long as the process; one that goes away first
  // (a test's) stops its writer thread.
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Starts recording (again, after finish()) into `path_template` (%p, %t expanded
  // for this process). max_tracked > 0 tracks frees of sampled blocks, up to that many
  // at once. create_file: write the file now, even before there is a sample.
  // tags describe the whole recording; every sample carries the thread's context
  // (nmprof.h) with one value per name of context_attributes.
  void start(const std::string& path_template, const Settings& settings, uint64_t max_tracked, bool create_file,
             const std::vector<Tag>& tags = {}, const std::vector<std::string>& context_attributes = {});
  bool recording() const { return active_.load(std::memory_order_acquire); }
  // The size the output file stops growing at (0: none; kept across start()).
  void limit_file_size(uint64_t max_bytes) { file_.limit_size(max_bytes); }

  // The sampled path. In a process with threads, the first sample starts the
  // background writer.
  void record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size, float weight,
                         jfr::schema::AllocatorKey allocator = jfr::schema::kLibc);
  // Heap-live: a free of a block that may be tracked (the filter said so). Not
  // `recorded`: the block is forgotten without a Free event (it stays live in the file).
  void record_free(ThreadState& t, uintptr_t address, bool recorded = true);
  // A runtime freed every block of `allocator` at once: their frees are recorded.
  void forget_blocks_of(ThreadState& t, jfr::schema::AllocatorKey allocator);
  // realloc: takes a tracked block out of the live set (false if not tracked), then
  // either records its free or puts it back (when the realloc failed).
  bool take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at);
  void settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed);

  // Appends everything recorded so far to the file. image_ends: the process image is
  // about to be replaced (exec): the statistics say it was recorded to its end.
  void flush(bool image_ends = false);
  // Opens the file now, as the first append would (the process is about to give up
  // the user id that can create it).
  void open_file_now();
  // The same, when events are buffered (a PHP request's end).
  void flush_if_pending();
  // In a JVM: the JVM's flusher thread is the writer (Java frames can only be named
  // from a thread where JVMTI may be called), and the agent's writer thread ends:
  // the flusher asks which Java methods the pending stacks hold, looks them up
  // without the lock, then flushes resolving those frames with `java`.
  void set_background_flush(bool on);
  void unresolved_java_methods(std::vector<uint64_t>& out);
  // The Java threads whose entries the next flush writes (their names may be refreshed).
  void pending_java_threads(std::vector<JavaThreadInfo*>& out);
  void flush_resolving(FrameResolver& java);
  // The last flush: nothing is recorded after it. A process that sampled nothing
  // leaves a recording without samples (OutputFile::open_now).
  void finish();
  // From a signal handler: flushes unless this thread interrupted the recorder itself
  // (returns false then; the caller retries once the interrupted code has left).
  bool flush_from_signal();

  // fork(): the child records into a file of its own, under its own pid.
  void before_fork();
  void after_fork_in_parent();
  void after_fork_in_child();
  // Whether a thread is in the middle of the recorder's state (a child made without
  // fork() that finds it so cannot trust its copy).
  bool locked() const;

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
  long pid() const { return pid_.load(std::memory_order_relaxed); }

 private:
  struct ThreadRecord;

  // The sampled path's parts.
  uint32_t thread_entry(ThreadState& t, uint32_t generation, SampleStripes::Stripe& stripe);
  void add_context(const nmprof_context_block* context, uint32_t generation, SampleStripes::Stripe& stripe);
  void add_attribute_value(std::string_view value, uint32_t generation, SampleStripes::Stripe& stripe);
  void resolve_php_frames_now(uint32_t id, int self);
  SampleStripes::Stripe* stripe_for_event(int self, uint32_t generation);
  void after_event(size_t stripe_bytes, uint64_t now);
  void append_free(ThreadState& t, uintptr_t address, uint64_t ticks);
  void start_writer();
  uint64_t key(uint32_t id) const { return key_base_.load(std::memory_order_relaxed) | id; }

  // The writer's parts, under write_lock_.
  void begin_generation();
  void append_prelude();
  // Collects and writes, if anything was recorded; under write_lock_.
  void write_collected(int self);
  bool collect(int self, uint64_t deadline = UINT64_MAX);
  void take_threads(const jfr::ByteBuffer& records);
  void take_stacks(const jfr::ByteBuffer& ids);
  void take_values(const jfr::ByteBuffer& ids);
  void resolve_native_frames(uint32_t id);
  void resolve_java_frames(FrameResolver& java);
  // image_ends: the process image's last write (its statistics say so).
  void write_locked(uint64_t now, bool defer_unresolved = false, bool image_ends = false);
  void write_final(uint64_t now);
  void write_pending_pools(bool defer_unresolved);
  bool has_unresolved_frames(uint32_t stack);
  void append_statistics(uint64_t now, bool image_ends);
  void append_last(uint64_t now);
  void append_new_modules();  // nmprof.Module events for modules of newly written frames
  size_t memory_bytes() const;
  // The background writer thread.
  static void* writer_main(void* recorder);
  void wait_for_work();

  struct ThreadEntry {
    int tid;
    std::string os_name;
    const JavaThreadInfo* java;  // null for threads that are not Java threads
  };

  FrameResolver& resolver_;
  const RateLimit& rate_;

  // Read on the sampled path.
  std::atomic<bool> active_{false};
  std::atomic<bool> background_flush_{false};
  std::atomic<uint32_t> generation_{0};  // bumped per output file; pool entries carry the one they were written in
  // pid << 32, and the process image (exec) in the top bits: pool keys stay unique
  // when the chunks of several processes and images are joined (the JDK's reader
  // keeps the first entry of a key for all chunks).
  std::atomic<uint64_t> key_base_{0};
  std::atomic<uint32_t> thread_entries_{0};  // given out in this generation
  std::atomic<uint64_t> lost_samples_{0};
  std::atomic<LiveHeap*> live_{nullptr};  // null when frees are not tracked
  std::atomic<uint32_t> context_attribute_count_{0};
  std::atomic<long> pid_{0};
  SampleStripes stripes_;
  StackTable stacks_;
  AttributeValues attribute_values_;
  // Writer thread: 0 not started, 1 running, 2 none (it failed or ended, or the
  // JVM's flusher writes), 3 asked to end. Futex words: a sampling thread asks for a write, and
  // waits for one when its stripe is full.
  std::atomic<int> writer_state_{0};
  std::atomic<uint32_t> write_wanted_{0};
  std::atomic<uint32_t> writes_done_{0};
  std::atomic<uint64_t> last_write_{0};

  // The writer's.
  SpinLock write_lock_;
  bool create_file_ = false;
  std::string path_template_;
  std::string start_time_text_;  // %t: formatted at start, since after fork() the time zone lock may be held
  Settings settings_;
  std::vector<Tag> tags_;
  // The metadata record's body and id, encoded at start for every chunk (a fork
  // child's too).
  jfr::ByteBuffer metadata_body_;
  uint64_t metadata_id_ = 0;
  ProcessInfo process_;
  uint64_t samples_ = 0;
  JfrPools pools_;
  // What a Java frame is called when it must be written before the flusher named it
  // (the process ends without the JVM's shutdown, e.g. by a signal).
  uint32_t unresolved_java_method_ = 0;
  std::vector<ThreadEntry> threads_;       // by entry - 1
  std::vector<uint32_t> pending_stacks_;   // to be written with the next append
  std::vector<uint32_t> pending_threads_;
  std::vector<uint32_t> pending_values_;   // attribute values, for the java.lang.String pool
  std::vector<const Module*> new_modules_;  // reused
  SampleStripes::Stripe taken_;  // a stripe's buffers, swapped out
  jfr::ConstantPools out_pools_;
  jfr::ByteBuffer events_;
  OutputFile file_;
};

}  // namespace nmprof
