// The writing half of a recording: takes what the sample sink's stripes hold, names
// the frames of new stacks, and appends the events with the pool entries they need
// (threads, stacks, methods, attribute values), the modules of new frames and the
// agent's statistics to the output file, one chunk per process and image. Not
// thread-safe: the recorder (recorder.h) calls it under its write lock.
//
// Out of memory (no address space left: ulimit -v), nothing half-made reaches the
// file: an allocation that fails here (a buffer or table that cannot grow) ends the
// recording after its last complete write, with statistics that say why (in room
// kept for them). The sampled path loses what it cannot record, and counts it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/recording/sample_sink.h"
#include "agent/recording/sample_stripes.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/writing/jfr_pools.h"
#include "agent/writing/output_file.h"
#include "agent/writing/process_info.h"
#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/writing/constant_pools.h"
#include "protocol/agent_options.h"

namespace nmprof {

struct JavaThreadInfo;
using Settings = std::vector<std::pair<std::string, std::string>>;

class RecordingWriter {
 public:
  // `rate`: where the statistics read the range of intervals used.
  RecordingWriter(SampleSink& sink, FrameResolver& resolver, const RateLimit& rate);

  // A recording into `path_template` (%p, %t expanded for this process), whose
  // chunks begin with `settings` and `tags`; create_file: write the file now, even
  // before there is a sample.
  void configure(const std::string& path_template, const Settings& settings, bool create_file,
                 const std::vector<Tag>& tags, const std::vector<std::string>& context_attributes);
  // A new output file (at start, and in a fork child) and generation of the sink.
  void begin_generation();

  // Takes what every stripe holds: events are appended as they are, new threads and
  // stacks become pending pool entries; then the sizes of blocks resized in place.
  // False when a stripe could not be taken before `deadline` (a signal handler does
  // not wait longer).
  bool collect(int self, uint64_t deadline = UINT64_MAX);
  // Writes what the stripes hold (`ends` as for write()); an idle process's file is
  // left alone, unless it is now between requests and its last write did not say so.
  void write_collected(int self, FileLimit ends = jfr::schema::kBeforeTheEnd);
  // Appends what was collected. defer_unresolved: stacks whose Java frames are not
  // named yet stay pending. ends: what its statistics say of how the recording goes
  // on: kBeforeTheEnd (more writes come), kBetweenRequests (more may come, but a server's
  // worker is idle between requests), kGrowing (the image's last write: it was
  // recorded to its end), kExeced (the last before an exec), kSeccompFilter (the
  // last: the recording ends before its process).
  void write(uint64_t now, bool defer_unresolved = false, FileLimit ends = jfr::schema::kBeforeTheEnd);
  // The last write of the process image (`ends` as for write()). A process that
  // sampled nothing writes too, where its file is its own (%p in the path, as under
  // nmprof run: its earlier images' recording is joined) or there is none.
  void write_final(uint64_t now, FileLimit ends = jfr::schema::kGrowing);

  // Names the frames of stack `id` that the resolver names on the sampled path.
  void name_frames_now(uint32_t id);
  // In a JVM, for the flusher: the Java methods and threads of what is pending, and
  // the naming of its Java frames.
  void unresolved_java_methods(std::vector<uint64_t>& out);
  void pending_java_threads(std::vector<JavaThreadInfo*>& out);
  void resolve_java_frames(FrameResolver& java);

  // The file can take nothing more (a limit, a write that failed, no memory): the
  // recording is over before its process.
  bool ended() const { return file_.failed() || ended_early_ != jfr::schema::kGrowing; }
  // Why (kBeforeTheEnd: its file could not be written).
  FileLimit stop_reason() const {
    FileLimit limit = file_.stopped_growing();
    return limit != jfr::schema::kGrowing          ? limit
           : ended_early_ != jfr::schema::kGrowing ? ended_early_
                                                   : jfr::schema::kBeforeTheEnd;
  }

  OutputFile& file() { return file_; }
  uint64_t samples() const { return samples_; }
  long pid() const { return pid_.load(std::memory_order_relaxed); }
  // When the last write was (read without the lock).
  uint64_t last_write() const { return last_write_.load(std::memory_order_relaxed); }

 private:
  struct ThreadEntry {
    int tid;
    std::string os_name;
    const JavaThreadInfo* java;  // null for threads that are not Java threads
  };

  // The room kept for the last statistics, whatever else fails.
  static constexpr size_t kLastRecordRoom = 4096;

  void configure_now(const std::string& path_template, const Settings& settings, bool create_file,
                     const std::vector<Tag>& tags, const std::vector<std::string>& context_attributes);
  bool reset_file();
  bool collect_now(int self, uint64_t deadline);
  void append_prelude();
  void append_process(jfr::ByteBuffer& to, uint64_t now);  // nmprof.Process
  void append_if_retitled(uint64_t now);
  void append_body(jfr::ByteBuffer& to);
  void take_threads(const jfr::ByteBuffer& records);
  void take_stacks(const jfr::ByteBuffer& ids);
  void take_values(const jfr::ByteBuffer& ids);
  void resolve_native_frames(uint32_t id);
  void write_pending_pools(bool defer_unresolved);
  bool has_unresolved_frames(uint32_t stack);
  void append_statistics(uint64_t now, FileLimit ends);
  void append_last(uint64_t now);
  // Runs f; an allocation that fails in it (std::bad_alloc) ends the recording at the
  // next write.
  template <typename F>
  bool guarded(F&& f);
  void end_for_memory(uint64_t now);
  void give_up_for_memory();
  void append_new_modules();  // nmprof.Module events for modules of newly written frames
  size_t memory_bytes() const;

  SampleSink& sink_;
  FrameResolver& resolver_;
  const RateLimit& rate_;
  std::atomic<long> pid_{0};
  std::atomic<uint64_t> last_write_{0};
  bool create_file_ = false;
  bool short_of_memory_ = false;                   // an allocation of the writer's failed
  FileLimit ended_early_ = jfr::schema::kGrowing;  // why the recording ended before its process
  FileLimit written_ends_ = jfr::schema::kGrowing;  // what the last write's statistics said of the end
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
  bool sampled_ = false;  // events were taken from the stripes, written or not
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
  jfr::ByteBuffer record_body_;  // a record being encoded (kept: no mapping per record)
  // The process's description (its Process, setting and tag events), made when its
  // recording begins and written before anything else, in an append of its own: a
  // first append too large for what is left of the disk (a second of deep stacks)
  // then leaves a recording that says whose it is and why it has no samples. Empty
  // once written.
  jfr::ConstantPools prelude_pools_;  // its frame types and allocators
  jfr::ByteBuffer prelude_events_;
  OutputFile file_;
};

}  // namespace nmprof
