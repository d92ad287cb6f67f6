#include "agent/recording/recording_writer.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "agent/log.h"
#include "agent/recording/clock.h"
#include "agent/safety/spin_lock.h"
#include "agent/threads/java_thread_info.h"
#include "agent/threads/thread_context.h"
#include "agent/writing/default_metadata.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/writing/event_record.h"

namespace nmprof {
namespace {

namespace schema = jfr::schema;

using ThreadRecord = SampleSink::ThreadRecord;

}  // namespace

RecordingWriter::RecordingWriter(SampleSink& sink, FrameResolver& resolver, const RateLimit& rate)
    : sink_(sink),
      resolver_(resolver),
      rate_(rate),
      out_pools_({schema::kThread, schema::kStackTrace, schema::kMethod, schema::kClass, schema::kPackage,
                  schema::kSymbol, schema::kFrameType, schema::kString, schema::kAllocator}),
      prelude_pools_({schema::kFrameType, schema::kAllocator}) {}

template <typename F>
bool RecordingWriter::guarded(F&& f) {
  try {
    f();
    return true;
  } catch (const std::exception&) {  // std::bad_alloc: the agent's memory is its own mappings
    short_of_memory_ = true;
    return false;
  }
}

void RecordingWriter::configure(const std::string& path_template, const Settings& settings, bool create_file,
                                const std::vector<Tag>& tags, const std::vector<std::string>& context_attributes) {
  short_of_memory_ = false;
  ended_early_ = schema::kGrowing;
  if (!guarded([&] { configure_now(path_template, settings, create_file, tags, context_attributes); }))
    give_up_for_memory();
}

void RecordingWriter::configure_now(const std::string& path_template, const Settings& settings, bool create_file,
                                    const std::vector<Tag>& tags, const std::vector<std::string>& context_attributes) {
  path_template_ = path_template;
  // Only when asked for: the time zone is loaded into the host's heap.
  start_time_text_ = path_template.find("%t") != std::string::npos ? local_time_text(time(nullptr)) : "";
  settings_ = settings;
  tags_ = tags;
  if (context_attributes.empty()) {
    metadata_body_.clear();
    metadata_body_.put_bytes(default_metadata_body().data(), default_metadata_body().size());
    metadata_id_ = default_metadata_id();
  } else {
    jfr::Metadata metadata = schema::nmprof_metadata(context_attributes);
    metadata_body_ = metadata.encode_body();
    metadata_id_ = metadata.fingerprint();
  }
  create_file_ = create_file;
  // Made now, not when needed: that may be in a signal handler.
  unresolved_java_method_ = pools_.method(pools_.klass("[unknown]"), "[unresolved Java frame]", "()V", 0);
}

// With no sampling thread in the middle of a stripe (at start, or in a fork child).
void RecordingWriter::begin_generation() {
  bool file_made = false;
  if (!guarded([&] { file_made = reset_file(); }) || !file_made) give_up_for_memory();
  // pids take 22 bits (pid_max is at most 2^22), images the 10 above them.
  uint64_t key_base = static_cast<uint64_t>(file_.earlier_images() % 1024) << 54 |
                      static_cast<uint64_t>(process_.pid) << 32;
  resolver_.forget_modules();
  int self = this_thread_id();
  uint32_t generation = sink_.generation() + 1;
  sink_.stripes().reset(generation, self);
  threads_.clear();
  events_.clear();
  out_pools_.clear();
  pending_stacks_.clear();
  pending_threads_.clear();
  pending_values_.clear();
  samples_ = 0;
  sampled_ = false;
  written_ends_ = schema::kGrowing;
  sink_.begin_generation(generation, key_base, self);
  append_prelude();
  // Room for the last statistics, made now: they must be writable when nothing else is.
  if (!events_.reserve(kLastRecordRoom) || !record_body_.reserve(kLastRecordRoom)) short_of_memory_ = true;
}

// This process's file, its description and its chunk's clock (what allocates); false
// when its metadata could not be made whole.
bool RecordingWriter::reset_file() {
  process_ = read_process_info();
  pid_.store(process_.pid, std::memory_order_relaxed);
  jfr::ChunkClock clock = current_chunk_clock();
  last_write_.store(clock.start_ticks, std::memory_order_relaxed);
  jfr::ByteBuffer metadata;
  jfr::Metadata::encode_record(metadata, clock.start_ticks, metadata_id_, metadata_body_);
  if (!metadata.ok() || !metadata_body_.ok()) return false;
  std::string path = expand_path_template(path_template_, process_.pid, start_time_text_);
  file_.reset(path, process_.pid, process_.start_millis, std::move(metadata), clock);
  return true;
}

// record_body_ as a record of `to`, whole: a body or buffer that could not grow
// ends the recording.
void RecordingWriter::append_body(jfr::ByteBuffer& to) {
  if (!record_body_.ok() || !jfr::append_record(to, record_body_.data(), record_body_.size())) short_of_memory_ = true;
}

void RecordingWriter::append_prelude() {
  prelude_pools_.clear();
  prelude_events_.clear();
  for (int i = 0; i < schema::kFrameTypeCount; i++) {
    auto& entry = prelude_pools_.add_entry(schema::kFrameType);
    entry.put_varint(static_cast<uint64_t>(i));
    entry.put_string(schema::frame_type_name(static_cast<schema::FrameTypeKey>(i)));
  }
  for (int i = 0; i < schema::kAllocatorCount; i++) {
    auto& entry = prelude_pools_.add_entry(schema::kAllocator);
    entry.put_varint(static_cast<uint64_t>(i));
    entry.put_string(schema::allocator_name(static_cast<schema::AllocatorKey>(i)));
  }
  uint64_t now = monotonic_ticks();
  append_process(prelude_events_, now);
  jfr::ByteBuffer& body = record_body_;
  for (const auto& [name, value] : settings_) {
    body.clear();
    body.put_varint(schema::kSettingEvent);
    body.put_varint(now);
    body.put_varint(0);  // duration
    body.put_varint(schema::kMallocEvent);
    body.put_string(name);
    body.put_string(value);
    append_body(prelude_events_);
  }
  for (const auto& [key, value] : tags_) {
    body.clear();
    body.put_varint(schema::kTagEvent);
    body.put_varint(now);
    body.put_string(key);
    body.put_string(value);
    append_body(prelude_events_);
  }
}

void RecordingWriter::append_process(jfr::ByteBuffer& to, uint64_t now) {
  jfr::ByteBuffer& body = record_body_;
  body.clear();
  body.put_varint(schema::kProcessEvent);
  body.put_varint(now);
  body.put_varint(static_cast<uint64_t>(process_.pid));
  body.put_varint(static_cast<uint64_t>(process_.parent_pid));
  body.put_string(process_.command_line);
  body.put_string(process_.executable);
  body.put_string(process_.host);
  body.put_varint(static_cast<uint64_t>(process_.start_millis));
  body.put_string(NMPROF_VERSION);
  append_body(to);
}

// A process that retitled itself since the last write (a php-fpm worker, forked with
// its master's title) is described again: the report names it as it ends.
void RecordingWriter::append_if_retitled(uint64_t now) {
  std::string command_line = read_command_line();
  if (command_line.empty() || command_line == process_.command_line) return;  // empty: no /proc
  process_.command_line = std::move(command_line);
  append_process(events_, now);
}

// Writes what the stripes hold; an idle process's file is left alone, unless `ends`
// says more than its last write did (a server's worker is now between requests).
void RecordingWriter::write_collected(int self, FileLimit ends) {
  collect(self);
  if (!events_.empty() || !pending_threads_.empty() || !prelude_events_.empty() ||
      (ends == schema::kBetweenRequests && written_ends_ != ends))
    write(monotonic_ticks(), false, ends);
}

// Takes what every stripe holds: events are appended as they are, new threads and
// stacks become pending pool entries; then the sizes of blocks resized in place.
// False when a stripe could not be taken before `deadline` (a signal handler does
// not wait longer).
bool RecordingWriter::collect(int self, uint64_t deadline) {
  bool all = true;
  guarded([&] { all = collect_now(self, deadline); });
  return all;
}

bool RecordingWriter::collect_now(int self, uint64_t deadline) {
  bool all = true;
  uint32_t generation = sink_.generation();
  for (unsigned i = 0; i < SampleStripes::kStripes; i++) {
    if (!sink_.stripes().take(i, taken_, self, deadline)) {
      all = false;
      continue;
    }
    if (taken_.generation == generation) {
      sampled_ |= taken_.samples != 0;
      take_threads(taken_.threads);
      take_stacks(taken_.stacks);
      take_values(taken_.values);
      events_.put_bytes(taken_.events.data(), taken_.events.size());
      samples_ += taken_.samples;
    }
    taken_.events.clear();
    taken_.stacks.clear();
    taken_.threads.clear();
    taken_.values.clear();
    taken_.samples = 0;
  }
  sink_.append_resizes(events_, self);
  return all;
}

void RecordingWriter::take_threads(const jfr::ByteBuffer& records) {
  for (size_t at = 0; at + sizeof(ThreadRecord) <= records.size(); at += sizeof(ThreadRecord)) {
    ThreadRecord r;
    memcpy(&r, records.data() + at, sizeof r);
    if (threads_.size() < r.entry) threads_.resize(r.entry);
    threads_[r.entry - 1] = {r.tid, std::string(r.name, strnlen(r.name, sizeof r.name)), r.java};
    pending_threads_.push_back(r.entry);
  }
}

// The ids list_once() put in a stripe's list.
template <typename F>
static void for_each_listed(const jfr::ByteBuffer& ids, F&& f) {
  for (size_t at = 0; at + sizeof(uint32_t) <= ids.size(); at += sizeof(uint32_t)) {
    uint32_t id;
    memcpy(&id, ids.data() + at, sizeof id);
    f(id);
  }
}

void RecordingWriter::take_stacks(const jfr::ByteBuffer& ids) {
  for_each_listed(ids, [this](uint32_t id) {
    resolve_native_frames(id);
    pending_stacks_.push_back(id);
  });
}

void RecordingWriter::take_values(const jfr::ByteBuffer& ids) {
  for_each_listed(ids, [this](uint32_t id) { pending_values_.push_back(id); });
}

// Native frames are named when their stack is first written; Java frames wait for
// the flusher (method 0).
void RecordingWriter::resolve_native_frames(uint32_t id) {
  const StackTable::Entry& e = sink_.stacks().entry(id);
  for (size_t i = 0; i < e.depth; i++)
    if (!e.frames[i].java && !e.methods[i]) resolver_.resolve(e.frames[i], pools_, e.methods[i], e.lines[i]);
}

// What is pending: the recorder collects first.
void RecordingWriter::unresolved_java_methods(std::vector<uint64_t>& out) {
  guarded([&] {
    for (uint32_t id : pending_stacks_) {
      const StackTable::Entry& e = sink_.stacks().entry(id);
      for (size_t i = 0; i < e.depth; i++)
        if (e.frames[i].java && !e.methods[i]) out.push_back(e.frames[i].id);
    }
  });
}

void RecordingWriter::pending_java_threads(std::vector<JavaThreadInfo*>& out) {
  guarded([&] {
    for (uint32_t id : pending_threads_)
      if (threads_[id - 1].java) out.push_back(const_cast<JavaThreadInfo*>(threads_[id - 1].java));
  });
}

void RecordingWriter::resolve_java_frames(FrameResolver& java) {
  guarded([&] {
    for (uint32_t id : pending_stacks_) {
      const StackTable::Entry& e = sink_.stacks().entry(id);
      for (size_t i = 0; i < e.depth; i++)
        if (e.frames[i].java && !e.methods[i]) java.resolve(e.frames[i], pools_, e.methods[i], e.lines[i]);
    }
  });
}

// Under the lock the writer takes too: the frames' methods go into its pools.
void RecordingWriter::name_frames_now(uint32_t id) {
  guarded([&] {
    const StackTable::Entry& e = sink_.stacks().entry(id);
    for (size_t i = 0; i < e.depth; i++)
      if (!e.methods[i] && resolver_.named_when_sampled(e.frames[i])) {
        int32_t line = -1;
        uint32_t method = 0;
        resolver_.resolve(e.frames[i], pools_, method, line);
        e.lines[i] = line;
        __atomic_store_n(&e.methods[i], method, __ATOMIC_RELEASE);
      }
  });
}

bool RecordingWriter::has_unresolved_frames(uint32_t stack) {
  const StackTable::Entry& e = sink_.stacks().entry(stack);
  return std::find(e.methods, e.methods + e.depth, 0u) != e.methods + e.depth;
}

// defer_unresolved: stacks whose Java frames are not named yet stay pending; the
// events that refer to them may come before their pool entry in the chunk.
void RecordingWriter::write_pending_pools(bool defer_unresolved) {
  for (uint32_t id : pending_threads_) {
    const ThreadEntry& t = threads_[id - 1];
    auto& entry = out_pools_.add_entry(schema::kThread);
    entry.put_varint(sink_.key(id));
    entry.put_string(t.os_name);
    entry.put_varint(static_cast<uint64_t>(t.tid));
    if (t.java)
      entry.put_string(*t.java->name.load(std::memory_order_acquire));
    else
      entry.put_null_string();
    entry.put_varint(t.java ? static_cast<uint64_t>(t.java->id) : 0);
  }
  for (uint32_t id : pending_values_) {
    auto& entry = out_pools_.add_entry(schema::kString);
    entry.put_varint(sink_.key(id));
    entry.put_string(sink_.attribute_values().entry(id).value());
  }
  size_t deferred = 0;
  for (uint32_t id : pending_stacks_) {
    if (defer_unresolved && has_unresolved_frames(id)) {
      pending_stacks_[deferred++] = id;
      continue;
    }
    const StackTable::Entry& e = sink_.stacks().entry(id);
    for (size_t i = 0; i < e.depth; i++) {
      if (!e.methods[i]) e.methods[i] = unresolved_java_method_;
      pools_.write_method(e.methods[i], out_pools_, sink_.generation(), sink_.key_base());
    }
    auto& entry = out_pools_.add_entry(schema::kStackTrace);
    entry.put_varint(sink_.key(id));
    entry.put_bool(e.truncated);
    entry.put_varint(e.depth);
    for (size_t i = 0; i < e.depth; i++) {
      const CallFrame& f = e.frames[i];
      entry.put_varint(sink_.key(e.methods[i]));
      entry.put_varint(static_cast<uint32_t>(e.lines[i]));
      entry.put_varint(f.java ? static_cast<uint32_t>(f.bci) : resolver_.link_offset(f));
      entry.put_varint(f.type);
    }
  }
  append_new_modules();
  pending_threads_.clear();
  pending_values_.clear();
  pending_stacks_.resize(deferred);
}

void RecordingWriter::append_new_modules() {
  new_modules_.clear();
  resolver_.take_new_modules(new_modules_);
  uint64_t now = monotonic_ticks();
  for (const Module* m : new_modules_) {
    const symbols::ImageIdentity& id = m->identity;
    jfr::ByteBuffer& body = record_body_;
    body.clear();
    body.put_varint(schema::kModuleEvent);
    body.put_varint(now);
    body.put_string(m->name);
    body.put_string(m->path);
    body.put_string(id.build_id);
    body.put_varint(id.size);
    body.put_varint(static_cast<uint64_t>(id.modified_ns));
    body.put_varint(id.device);
    body.put_varint(id.inode);
    append_body(events_);
  }
}

void RecordingWriter::append_statistics(uint64_t now, FileLimit ends) {
  LiveHeap* live = sink_.live();
  jfr::SmallRecord r(schema::kStatisticsEvent);
  r.varint(now);
  r.varint(samples_);
  r.varint(sink_.lost_samples());
  r.varint(memory_bytes());
  r.varint(live ? live->blocks() : 0);
  r.varint(live ? live->untracked() : 0);
  r.varint(live ? live->memory_bytes() : 0);
  r.varint(live ? static_cast<uint64_t>(std::max(live->live_bytes(), 0.0)) : 0);
  r.varint(undeclared_context_attributes());
  r.varint(rate_.min_used());
  r.varint(rate_.max_used());
  FileLimit stopped = file_.stopped_growing();
  if (stopped == schema::kGrowing) stopped = ended_early_;
  r.varint(stopped != schema::kGrowing ? stopped : ends);
  r.append_to(events_);
}

// The file stopped growing: what did not fit is dropped, and its last statistics
// say why (in the room the file kept for them).
void RecordingWriter::append_last(uint64_t now) {
  out_pools_.clear();
  events_.clear();
  append_statistics(now, schema::kBeforeTheEnd);
  file_.append(out_pools_, events_, now, true);
}

void RecordingWriter::write(uint64_t now, bool defer_unresolved, FileLimit ends) {
  last_write_.store(now, std::memory_order_relaxed);
  if (ended()) return;
  if (short_of_memory_) return end_for_memory(now);
  // A process that recorded nothing leaves no file (unless asked for one).
  if (!file_.opened() && samples_ == 0 && !create_file_) return;
  if (!prelude_events_.empty()) {
    if (!prelude_events_.ok() || !prelude_pools_.ok()) return end_for_memory(now);
    file_.append(prelude_pools_, prelude_events_, now);
    prelude_pools_.clear();
    prelude_events_.clear();
  }
  guarded([&] {
    write_pending_pools(defer_unresolved);
    append_if_retitled(now);
  });
  append_statistics(now, ends);
  written_ends_ = ends;
  if (short_of_memory_ || !events_.ok() || !out_pools_.ok()) return end_for_memory(now);
  if (!file_.append(out_pools_, events_, now) && file_.stopped_growing() != jfr::schema::kGrowing) append_last(now);
  out_pools_.clear();
  events_.clear();
}

// No file can be written (what its chunks begin with could not be made): the
// recording ends before it began.
void RecordingWriter::give_up_for_memory() {
  if (ended_early_ == schema::kGrowing)
    log_line(
        "process %d: the agent ran out of memory (no address space left: ulimit -v?) as its recording began: "
        "not recorded",
        static_cast<int>(getpid()));
  ended_early_ = schema::kOutOfMemory;
}

// What this write put together may be incomplete (a buffer or table could not grow):
// it is dropped, and the file ends with its last complete write and the statistics
// saying why (in room kept for them). A process that has recorded nothing, or whose
// statistics found no room, is left without more.
void RecordingWriter::end_for_memory(uint64_t now) {
  ended_early_ = schema::kOutOfMemory;
  log_line(
      "process %ld: the agent ran out of memory (no address space left: ulimit -v?); its recording ends at "
      "its last complete write",
      pid());
  out_pools_.clear();
  events_.clear();
  append_statistics(now, schema::kBeforeTheEnd);
  bool anything = file_.opened() || sampled_ || sink_.lost_samples() != 0 || create_file_;
  if (anything && events_.ok()) {
    if (!prelude_events_.empty() && prelude_events_.ok() && prelude_pools_.ok())
      file_.append(prelude_pools_, prelude_events_, now);
    file_.append(out_pools_, events_, now, true);
  }
  prelude_pools_.clear();
  prelude_events_.clear();
  events_.clear();
}

// The recording ends with the process.
void RecordingWriter::write_final(uint64_t now, FileLimit ends) {
  if (ended()) return;
  bool own_file = path_template_.find("%p") != std::string::npos;
  if (!file_.opened() && samples_ == 0 && !create_file_ && !file_.open_now(own_file)) return;
  write(now, false, ends);
}

size_t RecordingWriter::memory_bytes() const {
  return sink_.memory_bytes() + pools_.memory_bytes() + threads_.capacity() * sizeof(ThreadEntry) +
         (pending_stacks_.capacity() + pending_threads_.capacity() + pending_values_.capacity()) * sizeof(uint32_t) +
         events_.size();
}

}  // namespace nmprof
