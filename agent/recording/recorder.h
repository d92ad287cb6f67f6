// The recording of one process, as the agent starts, flushes, forks and stops it:
// sampling threads encode their events with the sample sink (sample_sink.h), and a
// writer (a background thread of the agent's, or the JVM's flusher) has the
// recording writer (recording_writer.h) append what the sink holds to the output
// file when a stripe fills or a second has passed, so the file on disk is always
// complete up to the last append. The writer's state is guarded by a lock no
// sampling thread takes for long.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/recording/recording_writer.h"
#include "agent/recording/sample_sink.h"
#include "agent/recording/writer_thread.h"
#include "agent/safety/spin_lock.h"
#include "agent/sampling/live_heap.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/call_stack.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/threads/thread_state.h"
#include "formats/jfr/nmprof_schema.h"
#include "protocol/agent_options.h"

namespace nmprof {

struct JavaThreadInfo;

class Recorder : private SampleSink::Drain {
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
  // Started and not finished, though it may have ended early (its file took nothing
  // more: nothing is sampled then).
  bool recording() const { return sink_.recording() || ended_early_.load(std::memory_order_acquire); }
  bool sampling() const { return sink_.recording(); }
  // Called, without the recorder's lock, once a recording ends before its process
  // because its file can take nothing more (a limit, a write that failed, no memory):
  // from the thread that wrote, never from a signal handler or the last write.
  void on_ended_early(void (*ended)()) { tell_early_end_ = ended; }
  // Called in the same way after each periodic write of a recording that goes on (the
  // writer thread's, at least once a second; in a process without it, a sampling
  // thread's).
  void on_written(void (*written)()) { tell_written_ = written; }
  // The size the output file stops growing at (0: none; kept across start()).
  void limit_file_size(uint64_t max_bytes) { writer_.file().limit_size(max_bytes); }
  void show_file_as(const std::string& output) { writer_.file().show_as(output); }

  // The sampled path (sample_sink.h). In a process with threads, the first sample
  // starts the background writer.
  // A realloc's sample: the block had `before` bytes (weight: of what it added;
  // live_weight: of the whole block, which the live view keeps).
  void record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size, float weight,
                         jfr::schema::AllocatorKey allocator = jfr::schema::kLibc, uint64_t before = 0,
                         float live_weight = 0) {
    sink_.record_allocation(t, stack, address, size, weight, allocator, before, live_weight);
  }
  // Heap-live: a free of a block that may be tracked (the filter said so). A block
  // allocated before `kept_if_born_before` (ticks) is forgotten without a Free event
  // (it stays live in the file).
  void record_free(ThreadState& t, uintptr_t address, uint64_t kept_if_born_before = 0) {
    sink_.record_free(t, address, kept_if_born_before);
  }
  // A runtime freed every block of `allocator` at once: their frees are recorded.
  void forget_blocks_of(ThreadState& t, jfr::schema::AllocatorKey allocator) { sink_.forget_blocks_of(t, allocator); }
  // realloc: marks a tracked block taken by this thread, out of other threads' sight
  // while the call runs (false if not tracked), then either records its free (as
  // record_free does) or puts it back (when the realloc failed).
  bool take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at) {
    return sink_.take_block(t, address, block, taken_at);
  }
  void settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed,
                    uint64_t kept_if_born_before = 0) {
    sink_.settle_block(t, block, taken_at, freed, kept_if_born_before);
  }
  // Or, for a realloc that was not sampled: the block is tracked at `to` with its new
  // size and that size's live weight (a Free event that says where it went; for a
  // block resized in place, one with the next write, whatever the reallocs between).
  void move_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, uintptr_t to, uint64_t size,
                  float live_weight) {
    sink_.move_block(t, block, taken_at, to, size, live_weight);
  }
  // A realloc in a heap only this thread allocates from grew the block at `address`
  // (tracked or not) where it was: see LiveHeap::grow. False: take it instead.
  bool grow_block(ThreadState& t, uintptr_t address, uint64_t size, float added, float resized) {
    return sink_.grow_block(t, address, size, added, resized);
  }

  // Appends everything recorded so far to the file. image_ends: the process image is
  // about to be replaced (exec): the statistics say so (kExeced), and a process that
  // sampled nothing writes too, so that a report can tell when the next image left
  // no recording.
  void flush(bool image_ends = false);
  // Opens the file now, as the first append would (the process is about to give up
  // the user id that can create it).
  void open_file_now();
  // The same, when events are buffered (a PHP request's end); the statistics say the
  // process is between requests (kBetweenRequests), written even when nothing else is.
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
  // leaves a recording without samples (OutputFile::open_now). reason: why it ends
  // before its process does (kGrowing: it does not).
  void finish(FileLimit reason = jfr::schema::kGrowing);
  // For the exit watch (agent/safety/exit_watch.h): a description of its own of the
  // file, opened for writing (-1: none yet); and, in the watch, once every thread of
  // the process has gone, the last write through it (OutputFile::write_through).
  int open_file_again();
  void finish_after_death(int file);
  // Ends the background writer thread and waits until it is gone (it makes system
  // calls of its own: a futex wait, its appends).
  void end_writer_thread();
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
    bool recording;           // started and not finished, though it may have ended early
    const char* ended_early;  // why the file took nothing more, or null
    std::string file;
    uint64_t samples;
    uint64_t lost_samples;
    uint64_t tracked_blocks;
    uint64_t live_bytes;  // estimated
  };
  Status status();
  long pid() const { return writer_.pid(); }

 private:
  // SampleSink::Drain.
  void event_added(size_t stripe_bytes, uint64_t now) override;
  void name_frames_now(uint32_t id, int self) override;

  void start_writer();
  // The background writer thread.
  static void* writer_main(void* recorder);
  void wait_for_work();
  // Under the lock, after a write: whether the recording just ended (tell_early_end_
  // is then due, once the lock is released; else tell_written_).
  bool after_write();
  void tell_after_write(bool ended);

  // Read on the sampled path.
  std::atomic<bool> background_flush_{false};
  WriterSignals writer_thread_;
  SampleSink sink_;
  // Under write_lock_.
  SpinLock write_lock_;
  RecordingWriter writer_;
  void (*tell_early_end_)() = nullptr;
  void (*tell_written_)() = nullptr;
  std::atomic<bool> ended_early_{false};  // since start(): the file took nothing more
};

}  // namespace nmprof
