#include "agent/recording/recorder.h"

#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/java/java_thread_info.h"
#include "agent/log.h"
#include "agent/options.h"
#include "agent/recording/clock.h"
#include "agent/recording/thread_context.h"
#include "agent/recording/writer_thread.h"
#include "agent/writing/default_metadata.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/writing/event_record.h"

namespace nmprof {
namespace {

namespace schema = jfr::schema;

constexpr size_t kWriteBytes = 256 * 1024;         // a stripe this full asks for a write
constexpr uint64_t kWriteNanos = 1000000000;       // at most a second of samples is ever unwritten
constexpr size_t kMaxStripeBytes = 4 << 20;        // beyond, a sample waits for the writer
constexpr int kWaitForWriterMillis = 100;          // then, with a stalled writer, it is dropped
constexpr int kWriterThreadRunning = 1, kNoWriterThread = 2, kWriterThreadToEnd = 3;

int current_tid() { return static_cast<int>(gettid()); }

}  // namespace

// A thread's first sample in a generation: what its pool entry needs.
struct Recorder::ThreadRecord {
  uint32_t entry;
  int tid;
  const JavaThreadInfo* java;
  char name[16];
};

Recorder::Recorder(FrameResolver& resolver, const RateLimit& rate)
    : resolver_(resolver),
      rate_(rate),
      out_pools_({schema::kThread, schema::kStackTrace, schema::kMethod, schema::kClass, schema::kPackage,
                  schema::kSymbol, schema::kFrameType, schema::kString, schema::kAllocator}) {}

Recorder::~Recorder() {
  int running = kWriterThreadRunning;
  if (!writer_state_.compare_exchange_strong(running, kWriterThreadToEnd)) return;
  write_wanted_.store(1, std::memory_order_release);
  wake_all(write_wanted_);
  while (writer_state_.load(std::memory_order_acquire) != kNoWriterThread) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

void Recorder::start(const std::string& path_template, const Settings& settings, uint64_t max_tracked,
                     bool create_file, const std::vector<Tag>& tags,
                     const std::vector<std::string>& context_attributes) {
  int self = current_tid();
  write_lock_.lock(self);
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
  context_attribute_count_.store(static_cast<uint32_t>(context_attributes.size()), std::memory_order_relaxed);
  create_file_ = create_file;
  // A restarted recording with other limits gets a new table (the old one is kept:
  // a free may be looking at the filter it published).
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  if (max_tracked && (!live || live->max_blocks() != max_tracked)) live = new LiveHeap(max_tracked);
  live_.store(max_tracked ? live : nullptr, std::memory_order_release);
  // Made now, not when needed: that may be in a signal handler.
  unresolved_java_method_ = pools_.method(pools_.klass("[unknown]"), "[unresolved Java frame]", "()V", 0);
  begin_generation();
  active_.store(true, std::memory_order_release);
  if (create_file) write_locked(monotonic_ticks());
  write_lock_.unlock();
}

// Under write_lock_, with no sampling thread in the middle of a stripe (at start,
// or in a fork child).
void Recorder::begin_generation() {
  process_ = read_process_info();
  pid_.store(process_.pid, std::memory_order_relaxed);
  uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  jfr::ChunkClock clock = current_chunk_clock();
  jfr::ByteBuffer metadata;
  jfr::Metadata::encode_record(metadata, clock.start_ticks, metadata_id_, metadata_body_);
  std::string path = expand_path_template(path_template_, process_.pid, start_time_text_);
  file_.reset(path, process_.pid, process_.start_millis, std::move(metadata), clock);
  // pids take 22 bits (pid_max is at most 2^22), images the 10 above them.
  key_base_.store(static_cast<uint64_t>(file_.earlier_images() % 1024) << 54 |
                      static_cast<uint64_t>(process_.pid) << 32,
                  std::memory_order_relaxed);
  resolver_.forget_modules();
  stripes_.reset(generation, current_tid());
  thread_entries_.store(0, std::memory_order_relaxed);
  threads_.clear();
  events_.clear();
  out_pools_.clear();
  pending_stacks_.clear();
  pending_threads_.clear();
  pending_values_.clear();
  samples_ = 0;
  lost_samples_ = 0;
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->clear();
  last_write_.store(clock.start_ticks, std::memory_order_relaxed);
  generation_.store(generation, std::memory_order_release);
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

// ---- The sampled path ----

// A thread gets a new entry in a new output file, and when the JVM told its Java
// identity after its first sample. Under the stripe's lock, so that the entry is
// taken with the event that refers to it.
uint32_t Recorder::thread_entry(ThreadState& t, uint32_t generation, SampleStripes::Stripe& stripe) {
  if (t.recorder_generation == generation && t.thread_entry_java == t.java_thread) return t.thread_entry;
  ThreadRecord record = {thread_entries_.fetch_add(1, std::memory_order_relaxed) + 1, t.id(), t.java_thread, {}};
  prctl(PR_GET_NAME, record.name);
  stripe.threads.put_bytes(&record, sizeof record);
  t.thread_entry = record.entry;
  t.recorder_generation = generation;
  t.thread_entry_java = t.java_thread;
  return t.thread_entry;
}

// The first thread to use a stack or an attribute value in a generation lists it
// for the writer; the others only read its entry (no write to a shared line on the
// common path).
static void list_once(std::atomic<uint32_t>& listed_in, uint32_t id, uint32_t generation, jfr::ByteBuffer& list) {
  if (listed_in.load(std::memory_order_relaxed) == generation) return;
  if (listed_in.exchange(generation, std::memory_order_relaxed) != generation) list.put_bytes(&id, sizeof id);
}

// A stripe of the current generation with room, or null (the sample is lost). When
// every stripe it may use is full, the thread waits for the writer a moment.
SampleStripes::Stripe* Recorder::stripe_for_event(int self, uint32_t generation) {
  for (int attempt = 0; attempt < 2; attempt++) {
    uint32_t writes = writes_done_.load(std::memory_order_acquire);
    SampleStripes::Stripe* s = stripes_.acquire(self);
    if (!s) return nullptr;
    if (s->generation == generation && s->bytes() < kMaxStripeBytes) return s;
    bool full = s->generation == generation;
    stripes_.release(s);
    if (!full || writer_state_.load(std::memory_order_acquire) != kWriterThreadRunning) return nullptr;
    write_wanted_.store(1, std::memory_order_release);
    wake_all(write_wanted_);
    wait_while(writes_done_, writes, kWaitForWriterMillis);
  }
  return nullptr;
}

// Asks for a write when a stripe is full enough, or a second has passed. The writer
// thread is started in a process that has threads already: in a single-threaded one
// a thread of ours would change how glibc's malloc works (it locks its arenas once a
// process has threads) and put the thread's own blocks in the host's heap, and no
// other thread waits for this one: there, as without a writer thread (the system
// refused one), the sampling thread writes.
void Recorder::after_event(size_t stripe_bytes, uint64_t now) {
  int state = writer_state_.load(std::memory_order_acquire);
  if (state == 0 && !__libc_single_threaded && !background_flush_.load(std::memory_order_relaxed)) {
    start_writer();
    state = writer_state_.load(std::memory_order_acquire);
  }
  if (state == kWriterThreadRunning) {
    if (stripe_bytes >= kWriteBytes && write_wanted_.exchange(1, std::memory_order_acq_rel) == 0)
      wake_all(write_wanted_);
    return;
  }
  if (stripe_bytes < kWriteBytes && now - last_write_.load(std::memory_order_relaxed) < kWriteNanos) return;
  if (background_flush_.load(std::memory_order_relaxed)) return;
  int self = current_tid();
  if (!write_lock_.try_lock(self)) return;
  if (recording()) {
    collect(self);
    write_locked(monotonic_ticks());
  }
  write_lock_.unlock();
}

void Recorder::record_allocation(ThreadState& t, const CallStack& stack, uint64_t address, uint64_t size,
                                 float weight, schema::AllocatorKey allocator) {
  if (!recording()) return;
  int self = t.id();
  uint32_t generation = generation_.load(std::memory_order_acquire);
  uint32_t id = stacks_.intern(stack, self);
  if (id) resolve_php_frames_now(id, self);
  SampleStripes::Stripe* s = id ? stripe_for_event(self, generation) : nullptr;
  if (!s) {
    lost_samples_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t now = monotonic_ticks();
  uint32_t thread = thread_entry(t, generation, *s);
  list_once(stacks_.entry(id).listed_in, id, generation, s->stacks);
  jfr::ByteBuffer& body = s->body;
  body.clear();
  body.put_varint(schema::kMallocEvent);
  body.put_varint(now);
  body.put_varint(key(thread));
  body.put_varint(key(id));
  body.put_varint(address);
  body.put_varint(size);
  body.put_float(weight);
  body.put_varint(allocator);
  add_context(t.context, generation, *s);
  jfr::append_record(s->events, body.data(), body.size());
  s->samples++;
  size_t bytes = s->bytes();
  stripes_.release(s);
  if (LiveHeap* live = live_.load(std::memory_order_acquire))
    live->insert({address, size, now, weight, id, allocator}, self);
  after_event(bytes, now);
}

// PHP frames point at the engine's function structures, which a request's end or
// the engine's shutdown frees: they are named now, by the thread that saw them
// alive, not later by the writer. Only a stack's first samples get here.
void Recorder::resolve_php_frames_now(uint32_t id, int self) {
  const StackTable::Entry& e = stacks_.entry(id);
  bool unnamed = false;
  for (size_t i = 0; i < e.depth && !unnamed; i++)
    unnamed = e.frames[i].type == schema::kPhp && !__atomic_load_n(&e.methods[i], __ATOMIC_ACQUIRE);
  if (!unnamed || write_lock_.owner() == self) return;
  write_lock_.lock(self);
  for (size_t i = 0; i < e.depth; i++)
    if (e.frames[i].type == schema::kPhp && !e.methods[i]) {
      int32_t line = -1;
      uint32_t method = 0;
      resolver_.resolve(e.frames[i], pools_, method, line);
      e.lines[i] = line;
      __atomic_store_n(&e.methods[i], method, __ATOMIC_RELEASE);
    }
  write_lock_.unlock();
}

// spanId, localRootSpanId, then each attribute's value, into the stripe's event.
void Recorder::add_context(const nmprof_context_block* context, uint32_t generation, SampleStripes::Stripe& stripe) {
  stripe.body.put_varint(context ? context->span_id : 0);
  stripe.body.put_varint(context ? context->local_root_span_id : 0);
  uint32_t attributes = context_attribute_count_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < attributes; i++) {
    size_t length = context ? std::min<size_t>(context->value_length[i], AttributeValues::kMaxLength) : 0;
    add_attribute_value(std::string_view(length ? context->values[i] : "", length), generation, stripe);
  }
}

// Empty: string encoding 1. Otherwise a key of the java.lang.String pool (encoding
// 2), listed for the writer by the first thread to use it in a generation (as
// stacks are); inline (encoding 3) only once the table of values is full.
void Recorder::add_attribute_value(std::string_view value, uint32_t generation, SampleStripes::Stripe& stripe) {
  uint32_t id = value.empty() ? 0 : attribute_values_.intern(value);
  if (!id) {
    stripe.body.put_string(value);
    return;
  }
  list_once(attribute_values_.entry(id).listed_in, id, generation, stripe.values);
  stripe.body.put_u8(2);
  stripe.body.put_varint(key(id));
}

bool Recorder::take_block(ThreadState& t, uintptr_t address, LiveHeap::Block* block, uint64_t* taken_at) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return false;
  *taken_at = monotonic_ticks();
  return live->remove(address, block, t.id());
}

void Recorder::settle_block(ThreadState& t, const LiveHeap::Block& block, uint64_t taken_at, bool freed) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return;
  if (freed)
    append_free(t, block.address, taken_at);
  else
    live->insert(block, t.id());
}

void Recorder::record_free(ThreadState& t, uintptr_t address, bool recorded) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording()) return;
  uint64_t now = monotonic_ticks();
  LiveHeap::Block block;
  if (live->remove(address, &block, t.id()) && recorded) append_free(t, address, now);
}

static_assert(schema::kAllocatorCount <= LiveHeap::kAllocators, "live blocks keep their allocator");

void Recorder::forget_blocks_of(ThreadState& t, schema::AllocatorKey allocator) {
  LiveHeap* live = live_.load(std::memory_order_acquire);
  if (!live || !recording() || !live->blocks_of(allocator)) return;
  uint64_t now = monotonic_ticks();
  live->remove_all_of(allocator, t.id(), [&](uintptr_t address) { append_free(t, address, now); });
}

void Recorder::append_free(ThreadState& t, uintptr_t address, uint64_t ticks) {
  int self = t.id();
  uint32_t generation = generation_.load(std::memory_order_acquire);
  SampleStripes::Stripe* s = stripe_for_event(self, generation);
  if (!s) return;  // the block is forgotten: it stays live in the file
  jfr::SmallRecord r(schema::kFreeEvent);
  r.varint(ticks);
  r.varint(key(thread_entry(t, generation, *s)));
  r.varint(0);  // no stack: frees are paired with their allocation by address and time
  r.varint(address);
  r.append_to(s->events);
  size_t bytes = s->bytes();
  stripes_.release(s);
  after_event(bytes, ticks);
}

void Recorder::start_writer() {
  int idle = 0;
  // Never from a vfork() child (it shares our memory until it execs).
  if (getpid() != pid() || !writer_state_.compare_exchange_strong(idle, kWriterThreadRunning)) return;
  if (int error = start_writer_thread(writer_main, this)) {
    writer_state_.store(kNoWriterThread, std::memory_order_release);
    // strerrorname_np: no locale, no allocation (strerror may do both).
    log_line("no writer thread (the system refused one: %s); threads that sample write the recording",
             strerrorname_np(error));
  }
}

// ---- The writer ----

void* Recorder::writer_main(void* p) {
  auto* self = static_cast<Recorder*>(p);
  // Scoped: nothing of this thread runs after the store below, which lets the
  // recorder (and, at exit, the process) go.
  {
    AgentGuard all_of_it_is_ours;
    int tid = current_tid();
    uint64_t threads_checked = monotonic_ticks();
    while (self->writer_state_.load(std::memory_order_acquire) == kWriterThreadRunning &&
           !self->background_flush_.load(std::memory_order_acquire)) {
      self->wait_for_work();
      self->write_lock_.lock(tid);
      if (self->recording() && !self->background_flush_.load(std::memory_order_relaxed) && getpid() == self->pid())
        self->write_collected(tid);
      self->write_lock_.unlock();
      self->writes_done_.fetch_add(1, std::memory_order_release);
      wake_all(self->writes_done_);
      // The host's last thread called pthread_exit(): looked at once a second.
      if (monotonic_ticks() - threads_checked >= kWriteNanos) {
        if (only_thread_left()) break;
        threads_checked = monotonic_ticks();
      }
    }
  }
  self->writer_state_.store(kNoWriterThread, std::memory_order_release);  // the last use of *self
  return nullptr;
}

// Until a sampling thread asks, or a second after the last write (or after now, when
// the last write is older: nothing was recorded since).
void Recorder::wait_for_work() {
  uint64_t since = monotonic_ticks() - last_write_.load(std::memory_order_relaxed);
  uint64_t wait = since < kWriteNanos ? kWriteNanos - since : kWriteNanos;
  if (write_wanted_.load(std::memory_order_acquire) == 0)
    wait_while(write_wanted_, 0, static_cast<int>(wait / 1000000) + 1);
  write_wanted_.store(0, std::memory_order_release);
}

// Writes what the stripes hold; an idle process's file is left alone.
void Recorder::write_collected(int self) {
  collect(self);
  if (!events_.empty() || !pending_threads_.empty()) write_locked(monotonic_ticks());
}

// Takes what every stripe holds: events are appended as they are, new threads and
// stacks become pending pool entries. False when a stripe could not be taken before
// `deadline` (a signal handler does not wait longer).
bool Recorder::collect(int self, uint64_t deadline) {
  bool all = true;
  uint32_t generation = generation_.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < SampleStripes::kStripes; i++) {
    if (!stripes_.take(i, taken_, self, deadline)) {
      all = false;
      continue;
    }
    if (taken_.generation == generation) {
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
  return all;
}

void Recorder::take_threads(const jfr::ByteBuffer& records) {
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

void Recorder::take_stacks(const jfr::ByteBuffer& ids) {
  for_each_listed(ids, [this](uint32_t id) {
    resolve_native_frames(id);
    pending_stacks_.push_back(id);
  });
}

void Recorder::take_values(const jfr::ByteBuffer& ids) {
  for_each_listed(ids, [this](uint32_t id) { pending_values_.push_back(id); });
}

// Native frames are named when their stack is first written; Java frames wait for
// the flusher (method 0).
void Recorder::resolve_native_frames(uint32_t id) {
  const StackTable::Entry& e = stacks_.entry(id);
  for (size_t i = 0; i < e.depth; i++)
    if (!e.frames[i].java && !e.methods[i]) resolver_.resolve(e.frames[i], pools_, e.methods[i], e.lines[i]);
}

void Recorder::set_background_flush(bool on) {
  write_lock_.lock(current_tid());
  background_flush_.store(on, std::memory_order_release);
  write_lock_.unlock();
  // The agent's writer thread sees it and ends.
  write_wanted_.store(1, std::memory_order_release);
  wake_all(write_wanted_);
}

void Recorder::unresolved_java_methods(std::vector<uint64_t>& out) {
  int self = current_tid();
  write_lock_.lock(self);
  collect(self);
  for (uint32_t id : pending_stacks_) {
    const StackTable::Entry& e = stacks_.entry(id);
    for (size_t i = 0; i < e.depth; i++)
      if (e.frames[i].java && !e.methods[i]) out.push_back(e.frames[i].id);
  }
  write_lock_.unlock();
}

void Recorder::pending_java_threads(std::vector<JavaThreadInfo*>& out) {
  int self = current_tid();
  write_lock_.lock(self);
  collect(self);
  for (uint32_t id : pending_threads_)
    if (threads_[id - 1].java) out.push_back(const_cast<JavaThreadInfo*>(threads_[id - 1].java));
  write_lock_.unlock();
}

void Recorder::resolve_java_frames(FrameResolver& java) {
  for (uint32_t id : pending_stacks_) {
    const StackTable::Entry& e = stacks_.entry(id);
    for (size_t i = 0; i < e.depth; i++)
      if (e.frames[i].java && !e.methods[i]) java.resolve(e.frames[i], pools_, e.methods[i], e.lines[i]);
  }
}

// Events collected after the flusher asked which methods to look up may refer to
// stacks whose Java frames it has not named: those stay pending (below).
void Recorder::flush_resolving(FrameResolver& java) {
  int self = current_tid();
  write_lock_.lock(self);
  if (recording()) {
    resolve_java_frames(java);
    write_locked(monotonic_ticks(), true);
  }
  write_lock_.unlock();
}

bool Recorder::has_unresolved_frames(uint32_t stack) {
  const StackTable::Entry& e = stacks_.entry(stack);
  return std::find(e.methods, e.methods + e.depth, 0u) != e.methods + e.depth;
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
  for (uint32_t id : pending_values_) {
    auto& entry = out_pools_.add_entry(schema::kString);
    entry.put_varint(key(id));
    entry.put_string(attribute_values_.entry(id).value());
  }
  size_t deferred = 0;
  for (uint32_t id : pending_stacks_) {
    if (defer_unresolved && has_unresolved_frames(id)) {
      pending_stacks_[deferred++] = id;
      continue;
    }
    const StackTable::Entry& e = stacks_.entry(id);
    for (size_t i = 0; i < e.depth; i++) {
      if (!e.methods[i]) e.methods[i] = unresolved_java_method_;
      pools_.write_method(e.methods[i], out_pools_, generation_.load(std::memory_order_relaxed),
                          key_base_.load(std::memory_order_relaxed));
    }
    auto& entry = out_pools_.add_entry(schema::kStackTrace);
    entry.put_varint(key(id));
    entry.put_bool(e.truncated);
    entry.put_varint(e.depth);
    for (size_t i = 0; i < e.depth; i++) {
      const CallFrame& f = e.frames[i];
      entry.put_varint(key(e.methods[i]));
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

void Recorder::append_new_modules() {
  new_modules_.clear();
  resolver_.take_new_modules(new_modules_);
  uint64_t now = monotonic_ticks();
  for (const Module* m : new_modules_) {
    const symbols::ImageIdentity& id = m->identity;
    jfr::ByteBuffer body;
    body.put_varint(schema::kModuleEvent);
    body.put_varint(now);
    body.put_string(m->name);
    body.put_string(m->path);
    body.put_string(id.build_id);
    body.put_varint(id.size);
    body.put_varint(static_cast<uint64_t>(id.modified_ns));
    body.put_varint(id.device);
    body.put_varint(id.inode);
    jfr::append_record(events_, body.data(), body.size());
  }
}

void Recorder::append_statistics(uint64_t now, bool image_ends) {
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  jfr::SmallRecord r(schema::kStatisticsEvent);
  r.varint(now);
  r.varint(samples_);
  r.varint(lost_samples_.load(std::memory_order_relaxed));
  r.varint(memory_bytes());
  r.varint(live ? live->blocks() : 0);
  r.varint(live ? live->untracked() : 0);
  r.varint(live ? live->memory_bytes() : 0);
  r.varint(live ? static_cast<uint64_t>(std::max(live->live_bytes(), 0.0)) : 0);
  r.varint(undeclared_context_attributes());
  r.varint(rate_.min_used());
  r.varint(rate_.max_used());
  FileLimit stopped = file_.stopped_growing();
  r.varint(stopped != schema::kGrowing ? stopped : image_ends ? schema::kGrowing : schema::kBeforeTheEnd);
  r.append_to(events_);
}

// The file stopped growing: what did not fit is dropped, and its last statistics
// say why (in the room the file kept for them).
void Recorder::append_last(uint64_t now) {
  out_pools_.clear();
  events_.clear();
  append_statistics(now, false);
  file_.append(out_pools_, events_, now, true);
}

void Recorder::write_locked(uint64_t now, bool defer_unresolved, bool image_ends) {
  // A process that recorded nothing leaves no file (unless asked for one).
  if (!file_.opened() && samples_ == 0 && !create_file_) return;
  write_pending_pools(defer_unresolved);
  append_statistics(now, image_ends);
  if (!file_.append(out_pools_, events_, now) && file_.stopped_growing() != jfr::schema::kGrowing) append_last(now);
  out_pools_.clear();
  events_.clear();
  last_write_.store(now, std::memory_order_relaxed);
}

// The recording ends with the process.
void Recorder::write_final(uint64_t now) {
  if (!file_.opened() && samples_ == 0 && !create_file_ && !file_.open_now(false)) return;
  write_locked(now, false, true);
}

void Recorder::open_file_now() {
  int self = current_tid();
  write_lock_.lock(self);
  if (recording()) file_.open_now(true);
  write_lock_.unlock();
}

void Recorder::flush(bool image_ends) {
  int self = current_tid();
  write_lock_.lock(self);
  if (recording()) {
    collect(self);
    write_locked(monotonic_ticks(), false, image_ends);
  }
  write_lock_.unlock();
}

// A PHP request's end: its events go to the file now, since php-fpm kills its
// workers with SIGTERM at its default action.
void Recorder::flush_if_pending() {
  int self = current_tid();
  write_lock_.lock(self);
  if (recording()) write_collected(self);
  write_lock_.unlock();
}

void Recorder::finish() {
  int self = current_tid();
  write_lock_.lock(self);
  if (recording()) {
    active_.store(false, std::memory_order_release);
    collect(self);
    write_final(monotonic_ticks());
    file_.close();
  }
  write_lock_.unlock();
}

bool Recorder::flush_from_signal() {
  int self = current_tid();
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  // Interrupted in the middle of the recorder: its locks, or the arena's (which
  // an addition to the stack table holds while it allocates), are this thread's.
  if (write_lock_.owner() == self || stacks_.owned_by(self) || stripes_.owned_by(self) ||
      (live && live->owned_by(self)))
    return false;
  // Others hold the locks only for short critical sections (the writer for one
  // append); give up after a second rather than hang the process's termination.
  uint64_t deadline = monotonic_ticks() + kWriteNanos;
  while (!write_lock_.try_lock(self)) {
    if (monotonic_ticks() >= deadline) return true;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  if (recording()) {
    collect(self, deadline);
    write_final(monotonic_ticks());
  }
  write_lock_.unlock();
  return true;
}

Recorder::Status Recorder::status() {
  int self = current_tid();
  write_lock_.lock(self);
  collect(self);
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  Status s{recording(), file_.path(), samples_, lost_samples_.load(std::memory_order_relaxed),
           live ? live->blocks() : 0, live ? static_cast<uint64_t>(std::max(live->live_bytes(), 0.0)) : 0};
  write_lock_.unlock();
  return s;
}

// The writer finishes its append, and no sampling thread is in the middle of a
// stripe, a stack addition or the live heap; the arena's lock comes after (agent.cpp).
void Recorder::before_fork() {
  int self = current_tid();
  write_lock_.lock(self);
  stacks_.before_fork(self);
  stripes_.before_fork(self);
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->before_fork(self);
}

void Recorder::after_fork_in_parent() {
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->after_fork();
  stripes_.after_fork();
  stacks_.after_fork();
  write_lock_.unlock();
}

void Recorder::after_fork_in_child() {
  t_state.tid_ = current_tid();
  if (LiveHeap* live = live_.load(std::memory_order_relaxed)) live->after_fork();
  stripes_.after_fork();
  stacks_.after_fork();
  // The writer thread did not come along: the child's first sample starts its own.
  writer_state_.store(background_flush_.load(std::memory_order_relaxed) ? kNoWriterThread : 0,
                      std::memory_order_relaxed);
  write_wanted_.store(0, std::memory_order_relaxed);
  // Drops the parent's unwritten events (the parent writes them) and its live blocks.
  if (recording()) begin_generation();
  write_lock_.unlock();
}

bool Recorder::locked() const {
  LiveHeap* live = live_.load(std::memory_order_relaxed);
  return write_lock_.owner() != 0 || stacks_.locked() || stripes_.locked() || (live && live->locked());
}

size_t Recorder::memory_bytes() const {
  return stacks_.memory_bytes() + attribute_values_.memory_bytes() + pools_.memory_bytes() +
         threads_.capacity() * sizeof(ThreadEntry) +
         (pending_stacks_.capacity() + pending_threads_.capacity() + pending_values_.capacity()) * sizeof(uint32_t) +
         events_.size();
}

}  // namespace nmprof
