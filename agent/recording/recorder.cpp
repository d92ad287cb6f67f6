#include "agent/recording/recorder.h"

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/recording/clock.h"
#include "agent/java/java_thread_info.h"
#include "agent/options.h"
#include "agent/recording/thread_context.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof {
namespace {

namespace schema = jfr::schema;

constexpr size_t kFlushBytes = 256 * 1024;
constexpr uint64_t kFlushNanos = 1000000000;  // at most a second of samples is ever unwritten
constexpr size_t kMaxBufferedBytes = 64 << 20;

int current_tid() { return static_cast<int>(gettid()); }

}  // namespace

Recorder::Recorder(FrameResolver& resolver, const RateLimit& rate)
    : resolver_(resolver),
      rate_(rate),
      out_pools_({schema::kThread, schema::kStackTrace, schema::kMethod, schema::kClass, schema::kPackage,
                  schema::kSymbol, schema::kFrameType, schema::kString, schema::kAllocator}) {}

void Recorder::start(const std::string& path_template, const Settings& settings, uint64_t max_tracked,
                     bool create_file, const std::vector<Tag>& tags,
                     const std::vector<std::string>& context_attributes) {
  lock_.lock(current_tid());
  path_template_ = path_template;
  // Only when asked for: the time zone is loaded into the host's heap.
  start_time_text_ = path_template.find("%t") != std::string::npos ? local_time_text(time(nullptr)) : "";
  settings_ = settings;
  tags_ = tags;
  context_attributes_ = context_attributes;
  create_file_ = create_file;
  // A restarted recording with other limits gets a new table (the old one is kept:
  // a free may be looking at the filter it published).
  if (max_tracked && (!live_ || live_->max_blocks() != max_tracked)) live_ = new LiveHeap(max_tracked);
  if (!max_tracked) live_ = nullptr;
  // Made now, not when needed: that may be in a signal handler.
  unresolved_java_method_ = pools_.method(pools_.klass("[unknown]"), "[unresolved Java frame]", "()V", 0);
  begin_generation();
  active_ = true;
  if (create_file) flush_locked(monotonic_ticks());
  lock_.unlock();
}

void Recorder::begin_generation() {
  process_ = read_process_info();
  generation_++;
  jfr::ChunkClock clock = current_chunk_clock();
  jfr::ByteBuffer metadata;
  jfr::Metadata m = schema::nmprof_metadata(context_attributes_);
  m.encode(metadata, clock.start_ticks, m.fingerprint());
  std::string path = expand_path_template(path_template_, process_.pid, start_time_text_);
  file_.reset(path, process_.pid, process_.start_millis, std::move(metadata), clock);
  // pids take 22 bits (pid_max is at most 2^22), images the 10 above them.
  key_base_ = static_cast<uint64_t>(file_.earlier_images() % 1024) << 54 | static_cast<uint64_t>(process_.pid) << 32;
  resolver_.forget_modules();
  events_.clear();
  out_pools_.clear();
  pending_stacks_.clear();
  pending_threads_.clear();
  samples_ = 0;
  lost_samples_ = 0;
  if (live_) live_->clear();
  last_flush_ = clock.start_ticks;
  append_prelude();
}

void Recorder::append_prelude() {
  for (int i = 0; i < schema::kFrameTypeCount; i++) {
    auto& entry = out_pools_.add_entry(schema::kFrameType);
    entry.put_varint(static_cast<uint64_t>(i));
    entry.put_string(schema::frame_type_name(static_cast<schema::FrameTypeKey>(i)));
  }
  for (int i = 0; i < schema::kAllocatorCount; i++) {
    auto& entry = out_pools_.add_entry(schema::kAllocator);
    entry.put_varint(static_cast<uint64_t>(i));
    entry.put_string(schema::allocator_name(static_cast<schema::AllocatorKey>(i)));
  }
  uint64_t now = monotonic_ticks();
  jfr::ByteBuffer body;
  body.put_varint(schema::kProcessEvent);
  body.put_varint(now);
  body.put_varint(static_cast<uint64_t>(process_.pid));
  body.put_varint(static_cast<uint64_t>(process_.parent_pid));
  body.put_string(process_.command_line);
  body.put_string(process_.executable);
  body.put_string(process_.host);
  body.put_varint(static_cast<uint64_t>(process_.start_millis));
  body.put_string(NMPROF_VERSION);
  jfr::append_record(events_, body.data(), body.size());
  for (const auto& [name, value] : settings_) {
    body.clear();
    body.put_varint(schema::kSettingEvent);
    body.put_varint(now);
    body.put_varint(0);  // duration
    body.put_varint(schema::kMallocEvent);
    body.put_string(name);
    body.put_string(value);
    jfr::append_record(events_, body.data(), body.size());
  }
  for (const auto& [key, value] : tags_) {
    body.clear();
    body.put_varint(schema::kTagEvent);
    body.put_varint(now);
    body.put_string(key);
    body.put_string(value);
    jfr::append_record(events_, body.data(), body.size());
  }
}

// A thread gets a new entry in a new output file, and when the JVM told its Java
// identity after its first sample.
uint32_t Recorder::thread_entry(ThreadState& t) {
  if (t.recorder_generation == generation_ && t.thread_entry_java == t.java_thread) return t.thread_entry;
  char name[16] = {};
  prctl(PR_GET_NAME, name);
  threads_.push_back(ThreadEntry{t.id(), name, t.java_thread});
  t.thread_entry = static_cast<uint32_t>(threads_.size());
  t.recorder_generation = generation_;
  t.thread_entry_java = t.java_thread;
  pending_threads_.push_back(t.thread_entry);
  return t.thread_entry;
}

// Native frames are named now; Java frames wait for the flusher (method 0).
void Recorder::resolve_new_stack(uint32_t id) {
  const StackTable::Entry& e = stacks_.entry(id);
  const CallFrame* frames = stacks_.frames(e);
  uint32_t* methods = stacks_.methods(e);
  int32_t* lines = stacks_.lines(e);
  for (size_t i = 0; i < e.depth; i++)
    if (!frames[i].java) resolver_.resolve(frames[i], pools_, methods[i], lines[i]);
}

void Recorder::set_background_flush(bool on) {
  lock_.lock(current_tid());
  background_flush_ = on;
  lock_.unlock();
}

void Recorder::unresolved_java_methods(std::vector<uint64_t>& out) {
  lock_.lock(current_tid());
  for (uint32_t id : pending_stacks_) {
    const StackTable::Entry& e = stacks_.entry(id);
    const CallFrame* frames = stacks_.frames(e);
    const uint32_t* methods = stacks_.methods(e);
    for (size_t i = 0; i < e.depth; i++)
      if (frames[i].java && !methods[i]) out.push_back(frames[i].id);
  }
  lock_.unlock();
}

void Recorder::pending_java_threads(std::vector<JavaThreadInfo*>& out) {
  lock_.lock(current_tid());
  for (uint32_t id : pending_threads_)
    if (threads_[id - 1].java) out.push_back(const_cast<JavaThreadInfo*>(threads_[id - 1].java));
  lock_.unlock();
}

void Recorder::resolve_java_frames(FrameResolver& java) {
  for (uint32_t id : pending_stacks_) {
    const StackTable::Entry& e = stacks_.entry(id);
    const CallFrame* frames = stacks_.frames(e);
    uint32_t* methods = stacks_.methods(e);
    int32_t* lines = stacks_.lines(e);
    for (size_t i = 0; i < e.depth; i++)
      if (frames[i].java && !methods[i]) java.resolve(frames[i], pools_, methods[i], lines[i]);
  }
}

void Recorder::flush_resolving(FrameResolver& java) {
  lock_.lock(current_tid());
  if (active_) {
    resolve_java_frames(java);
    flush_locked(monotonic_ticks(), true);
  }
  lock_.unlock();
}



void Recorder::record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size,
                                 float weight, schema::AllocatorKey allocator) {
  // Our own thread already holds the lock only when fork()'s prepare handler or a
  // signal interrupted the recorder: drop the sample rather than deadlock.
  if (lock_.owner() == t.id()) {
    lost_samples_++;
    return;
  }
  uint64_t now = monotonic_ticks();
  lock_.lock(t.id());
  // With a stalled flusher the buffer would grow without end: drop samples instead.
  if (active_ && !file_.failed() && events_.size() < kMaxBufferedBytes) {
    uint32_t thread = thread_entry(t);
    bool added;
    uint32_t id = stacks_.intern(stack, added);
    if (added) resolve_new_stack(id);
    StackTable::Entry& e = stacks_.entry(id);
    if (e.written_in != generation_) {
      e.written_in = generation_;  // "in the file by the next append"
      pending_stacks_.push_back(id);
    }
    jfr::SmallRecord r(schema::kMallocEvent);
    r.varint(now);
    r.varint(key(thread));
    r.varint(key(id));
    r.varint(address);
    r.varint(size);
    r.f32(weight);
    r.varint(allocator);
    add_context(r, t.context);
    r.append_to(events_);
    samples_++;
    if (live_) live_->insert({address, size, now, weight, id});
    maybe_flush(now);
  } else if (active_) {
    lost_samples_++;
  }
  lock_.unlock();
}

// spanId, localRootSpanId, then each attribute: empty (string encoding 1), or a key
// of the java.lang.String pool (encoding 2), whose entry goes out with the next append.
void Recorder::add_context(jfr::SmallRecord& r, const nmprof_context_block* context) {
  r.varint(context ? context->span_id : 0);
  r.varint(context ? context->local_root_span_id : 0);
  for (size_t i = 0; i < context_attributes_.size(); i++) {
    size_t length = context ? std::min<size_t>(context->value_length[i], NMPROF_ATTRIBUTE_SIZE - 1) : 0;
    if (length == 0) {
      r.u8(1);
      continue;
    }
    uint32_t id = pools_.string(std::string_view(context->values[i], length));
    pools_.write_string(id, out_pools_, generation_, key_base_);
    r.u8(2);
    r.varint(key(id));
  }
}

void Recorder::maybe_flush(uint64_t now) {
  if (!background_flush_ && (events_.size() >= kFlushBytes || now - last_flush_ >= kFlushNanos)) flush_locked(now);
}

bool Recorder::take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at) {
  if (lock_.owner() == t.id()) return false;
  *taken_at = monotonic_ticks();
  lock_.lock(t.id());
  bool taken = active_ && live_ && live_->remove(address, block);
  lock_.unlock();
  return taken;
}

void Recorder::settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed) {
  lock_.lock(t.id());
  if (active_ && live_ && !freed)
    live_->insert(block);
  else if (active_)
    append_free(t, block.address, taken_at);
  lock_.unlock();
}

void Recorder::record_free(ThreadState& t, uintptr_t address, bool recorded) {
  if (lock_.owner() == t.id()) return;
  uint64_t now = monotonic_ticks();
  lock_.lock(t.id());
  LiveHeap::Block block;
  if (active_ && live_ && live_->remove(address, &block) && recorded) append_free(t, address, now);
  lock_.unlock();
}

void Recorder::append_free(ThreadState& t, uintptr_t address, uint64_t ticks) {
  if (file_.failed()) return;
  jfr::SmallRecord r(schema::kFreeEvent);
  r.varint(ticks);
  r.varint(key(thread_entry(t)));
  r.varint(0);  // no stack: frees are paired with their allocation by address and time
  r.varint(address);
  r.append_to(events_);
  maybe_flush(ticks);
}

bool Recorder::has_unresolved_frames(uint32_t stack) {
  const StackTable::Entry& e = stacks_.entry(stack);
  const uint32_t* methods = stacks_.methods(e);
  return std::find(methods, methods + e.depth, 0u) != methods + e.depth;
}

// defer_unresolved: stacks whose Java frames are not named yet stay pending; the
// events that refer to them may come before their pool entry in the chunk.
void Recorder::write_pending_pools(bool defer_unresolved) {
  for (uint32_t id : pending_threads_) {
    const ThreadEntry& t = threads_[id - 1];
    auto& entry = out_pools_.add_entry(schema::kThread);
    entry.put_varint(key(id));
    entry.put_string(t.os_name);
    entry.put_varint(static_cast<uint64_t>(t.tid));
    if (t.java)
      entry.put_string(*t.java->name.load(std::memory_order_acquire));
    else
      entry.put_null_string();
    entry.put_varint(t.java ? static_cast<uint64_t>(t.java->id) : 0);
  }
  size_t deferred = 0;
  for (uint32_t id : pending_stacks_) {
    if (defer_unresolved && has_unresolved_frames(id)) {
      pending_stacks_[deferred++] = id;
      continue;
    }
    const StackTable::Entry& e = stacks_.entry(id);
    const CallFrame* frames = stacks_.frames(e);
    uint32_t* methods = stacks_.methods(e);
    const int32_t* lines = stacks_.lines(e);
    for (size_t i = 0; i < e.depth; i++) {
      if (!methods[i]) methods[i] = unresolved_java_method_;
      pools_.write_method(methods[i], out_pools_, generation_, key_base_);
    }
    auto& entry = out_pools_.add_entry(schema::kStackTrace);
    entry.put_varint(key(id));
    entry.put_bool(e.truncated);
    entry.put_varint(e.depth);
    for (size_t i = 0; i < e.depth; i++) {
      entry.put_varint(key(methods[i]));
      entry.put_varint(static_cast<uint32_t>(lines[i]));
      entry.put_varint(frames[i].java ? static_cast<uint32_t>(frames[i].bci) : resolver_.link_offset(frames[i]));
      entry.put_varint(frames[i].type);
    }
  }
  append_new_modules();
  pending_threads_.clear();
  pending_stacks_.resize(deferred);
}

void Recorder::append_new_modules() {
  new_modules_.clear();
  resolver_.take_new_modules(new_modules_);
  uint64_t now = monotonic_ticks();
  for (const auto& [name, path] : new_modules_) {
    jfr::ByteBuffer body;
    body.put_varint(schema::kModuleEvent);
    body.put_varint(now);
    body.put_string(name);
    body.put_string(path);
    jfr::append_record(events_, body.data(), body.size());
  }
}

void Recorder::append_statistics(uint64_t now) {
  jfr::SmallRecord r(schema::kStatisticsEvent);
  r.varint(now);
  r.varint(samples_);
  r.varint(lost_samples_);
  r.varint(memory_bytes());
  r.varint(live_ ? live_->blocks() : 0);
  r.varint(live_ ? live_->untracked() : 0);
  r.varint(live_ ? live_->memory_bytes() : 0);
  r.varint(live_ ? static_cast<uint64_t>(live_->live_bytes() > 0 ? live_->live_bytes() : 0) : 0);
  r.varint(undeclared_context_attributes());
  r.varint(rate_.min_used());
  r.varint(rate_.max_used());
  r.varint(static_cast<uint64_t>(file_.stopped_growing()));
  r.append_to(events_);
}

// The file stopped growing: what did not fit is dropped, and its last statistics
// say why (in the room the file kept for them).
void Recorder::append_last(uint64_t now) {
  out_pools_.clear();
  events_.clear();
  append_statistics(now);
  file_.append(out_pools_, events_, now, true);
}

void Recorder::flush_locked(uint64_t now, bool defer_unresolved) {
  // A process that recorded nothing leaves no file (unless asked for one).
  if (!file_.opened() && samples_ == 0 && !create_file_) return;
  write_pending_pools(defer_unresolved);
  append_statistics(now);
  if (!file_.append(out_pools_, events_, now) && file_.stopped_growing() != jfr::schema::kGrowing) append_last(now);
  out_pools_.clear();
  events_.clear();
  last_flush_ = now;
}

void Recorder::flush() {
  lock_.lock(current_tid());
  if (active_) flush_locked(monotonic_ticks());
  lock_.unlock();
}

void Recorder::finish() {
  lock_.lock(current_tid());
  if (active_) {
    flush_locked(monotonic_ticks());
    file_.close();
    active_ = false;
  }
  lock_.unlock();
}

bool Recorder::flush_from_signal() {
  int self = current_tid();
  if (lock_.owner() == self) return false;
  // Another thread holds the lock only for a short critical section; give up after
  // a second rather than hang the process's termination.
  for (int waited_ms = 0; !lock_.try_lock(self); waited_ms++) {
    if (waited_ms >= 1000) return true;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  if (active_) flush_locked(monotonic_ticks());
  lock_.unlock();
  return true;
}

Recorder::Status Recorder::status() {
  lock_.lock(current_tid());
  Status s{active_, file_.path(), samples_, lost_samples_, live_ ? live_->blocks() : 0,
           live_ && live_->live_bytes() > 0 ? static_cast<uint64_t>(live_->live_bytes()) : 0};
  lock_.unlock();
  return s;
}

void Recorder::before_fork() { lock_.lock(current_tid()); }

void Recorder::after_fork_in_parent() { lock_.unlock(); }

void Recorder::after_fork_in_child() {
  t_state.tid_ = current_tid();
  // Drops the parent's unwritten events (the parent writes them) and its live blocks.
  if (active_) begin_generation();
  lock_.unlock();
}

size_t Recorder::memory_bytes() const {
  return stacks_.memory_bytes() + pools_.memory_bytes() + threads_.capacity() * sizeof(ThreadEntry) +
         (pending_stacks_.capacity() + pending_threads_.capacity()) * sizeof(uint32_t) + events_.size();
}

}  // namespace nmprof
