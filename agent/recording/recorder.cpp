#include "agent/recording/recorder.h"

#include <signal.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/log.h"
#include "agent/recording/clock.h"

namespace nmprof {
namespace {

constexpr size_t kWriteBytes = 256 * 1024;    // a stripe this full asks for a write
constexpr uint64_t kWriteNanos = 1000000000;  // at most a second of samples is ever unwritten

}  // namespace

Recorder::Recorder(FrameResolver& resolver, const RateLimit& rate)
    : sink_(resolver, *this, writer_thread_), writer_(sink_, resolver, rate) {}

Recorder::~Recorder() { end_writer_thread(); }

void Recorder::end_writer_thread() {
  int running = WriterSignals::kRunning;
  if (!writer_thread_.state.compare_exchange_strong(running, WriterSignals::kToEnd)) return;
  writer_thread_.write_wanted.store(1, std::memory_order_release);
  wake_all(writer_thread_.write_wanted);
  struct timespec ms = {0, 1000000};
  while (writer_thread_.state.load(std::memory_order_acquire) != WriterSignals::kNone) nanosleep(&ms, nullptr);
  // Then until it has left (its exit makes system calls too), for at most a second.
  int tid = writer_thread_.tid.load(std::memory_order_acquire);
  for (int waited = 0; tid && waited < 1000 && tgkill(getpid(), tid, 0) == 0; waited++) nanosleep(&ms, nullptr);
}

void Recorder::start(const std::string& path_template, const Settings& settings, uint64_t max_tracked,
                     bool create_file, const std::vector<Tag>& tags,
                     const std::vector<std::string>& context_attributes) {
  int self = this_thread_id();
  write_lock_.lock(self);
  ended_early_.store(false, std::memory_order_release);
  writer_.configure(path_template, settings, create_file, tags, context_attributes);
  sink_.set_context_attributes(static_cast<uint32_t>(context_attributes.size()));
  if (!sink_.track_frees(max_tracked)) log_line("no memory for the table of live blocks: frees are not tracked");
  writer_.begin_generation();
  sink_.set_recording(!writer_.ended());  // no memory even for its beginning
  if (create_file) writer_.write(monotonic_ticks());
  write_lock_.unlock();
}

// Asks for a write when a stripe is full enough, or a second has passed. The writer
// thread is started in a process that has threads already: in a single-threaded one
// a thread of ours would change how glibc's malloc works (it locks its arenas once a
// process has threads) and put the thread's own blocks in the host's heap, and no
// other thread waits for this one: there, as without a writer thread (the system
// refused one), the sampling thread writes.
void Recorder::event_added(size_t stripe_bytes, uint64_t now) {
  int state = writer_thread_.state.load(std::memory_order_acquire);
  if (state == 0 && !__libc_single_threaded && !background_flush_.load(std::memory_order_relaxed)) {
    start_writer();
    state = writer_thread_.state.load(std::memory_order_acquire);
  }
  if (state == WriterSignals::kRunning) {
    if (stripe_bytes >= kWriteBytes && writer_thread_.write_wanted.exchange(1, std::memory_order_acq_rel) == 0)
      wake_all(writer_thread_.write_wanted);
    return;
  }
  if (stripe_bytes < kWriteBytes && now - writer_.last_write() < kWriteNanos) return;
  if (background_flush_.load(std::memory_order_relaxed)) return;
  int self = this_thread_id();
  if (!write_lock_.try_lock(self)) return;
  bool ended = false;
  if (sampling()) {
    writer_.collect(self);
    writer_.write(monotonic_ticks());
    ended = after_write();
  }
  write_lock_.unlock();
  tell_after_write(ended);
}

bool Recorder::after_write() {
  if (!sampling() || !writer_.ended()) return false;
  sink_.set_recording(false);
  writer_.file().close();
  ended_early_.store(true, std::memory_order_release);
  return true;
}

void Recorder::tell_after_write(bool ended) {
  if (ended) {
    if (tell_early_end_) tell_early_end_();
  } else if (tell_written_ && sampling()) {
    tell_written_();
  }
}

// The frames' methods go into the writer's pools: under its lock.
void Recorder::name_frames_now(uint32_t id, int self) {
  if (write_lock_.owner() == self) return;
  write_lock_.lock(self);
  writer_.name_frames_now(id);
  write_lock_.unlock();
}

void Recorder::start_writer() {
  int idle = 0;
  // Never from a vfork() child (it shares our memory until it execs).
  if (getpid() != pid() || !writer_thread_.state.compare_exchange_strong(idle, WriterSignals::kRunning)) return;
  if (int error = start_writer_thread(writer_main, this)) {
    writer_thread_.state.store(WriterSignals::kNone, std::memory_order_release);
    // strerrorname_np: no locale, no allocation (strerror may do both).
    log_line("no writer thread (the system refused one: %s); threads that sample write the recording",
             strerrorname_np(error));
  }
}

void* Recorder::writer_main(void* p) {
  auto* self = static_cast<Recorder*>(p);
  // Scoped: nothing of this thread runs after the store below, which lets the
  // recorder (and, at exit, the process) go.
  {
    AgentGuard all_of_it_is_ours;
    int tid = this_thread_id();
    self->writer_thread_.tid.store(tid, std::memory_order_release);
    uint64_t threads_checked = monotonic_ticks();
    while (self->writer_thread_.state.load(std::memory_order_acquire) == WriterSignals::kRunning &&
           !self->background_flush_.load(std::memory_order_acquire)) {
      self->wait_for_work();
      self->write_lock_.lock(tid);
      bool ended = false;
      if (self->sampling() && !self->background_flush_.load(std::memory_order_relaxed) && getpid() == self->pid()) {
        self->writer_.write_collected(tid);
        ended = self->after_write();
      }
      self->write_lock_.unlock();
      self->tell_after_write(ended);
      self->writer_thread_.writes_done.fetch_add(1, std::memory_order_release);
      wake_all(self->writer_thread_.writes_done);
      // The host's last thread called pthread_exit(): looked at once a second.
      if (monotonic_ticks() - threads_checked >= kWriteNanos) {
        if (only_thread_left()) break;
        threads_checked = monotonic_ticks();
      }
    }
  }
  self->writer_thread_.state.store(WriterSignals::kNone, std::memory_order_release);  // the last use of *self
  return nullptr;
}

// Until a sampling thread asks, or a second after the last write (or after now, when
// the last write is older: nothing was recorded since).
void Recorder::wait_for_work() {
  uint64_t since = monotonic_ticks() - writer_.last_write();
  uint64_t wait = since < kWriteNanos ? kWriteNanos - since : kWriteNanos;
  if (writer_thread_.write_wanted.load(std::memory_order_acquire) == 0)
    wait_while(writer_thread_.write_wanted, 0, static_cast<int>(wait / 1000000) + 1);
  writer_thread_.write_wanted.store(0, std::memory_order_release);
}

void Recorder::set_background_flush(bool on) {
  write_lock_.lock(this_thread_id());
  background_flush_.store(on, std::memory_order_release);
  write_lock_.unlock();
  // The agent's writer thread sees it and ends.
  writer_thread_.write_wanted.store(1, std::memory_order_release);
  wake_all(writer_thread_.write_wanted);
}

void Recorder::unresolved_java_methods(std::vector<uint64_t>& out) {
  int self = this_thread_id();
  write_lock_.lock(self);
  writer_.collect(self);
  writer_.unresolved_java_methods(out);
  write_lock_.unlock();
}

void Recorder::pending_java_threads(std::vector<JavaThreadInfo*>& out) {
  int self = this_thread_id();
  write_lock_.lock(self);
  writer_.collect(self);
  writer_.pending_java_threads(out);
  write_lock_.unlock();
}

// Events collected after the flusher asked which methods to look up may refer to
// stacks whose Java frames it has not named: those stay pending (below).
void Recorder::flush_resolving(FrameResolver& java) {
  int self = this_thread_id();
  write_lock_.lock(self);
  bool ended = false;
  if (sampling()) {
    writer_.resolve_java_frames(java);
    writer_.write(monotonic_ticks(), true);
    ended = after_write();
  }
  write_lock_.unlock();
  tell_after_write(ended);
}

void Recorder::open_file_now() {
  int self = this_thread_id();
  write_lock_.lock(self);
  if (sampling()) writer_.file().open_now(true);
  write_lock_.unlock();
}

int Recorder::open_file_again() {
  int self = this_thread_id();
  write_lock_.lock(self);
  int fd = sampling() ? writer_.file().open_again() : -1;
  write_lock_.unlock();
  return fd;
}

void Recorder::finish_after_death(int file) {
  int self = this_thread_id();
  write_lock_.lock(self);
  bool as_left = recording() && writer_.file().write_through(file);
  write_lock_.unlock();
  if (as_left) finish();
}

void Recorder::flush(bool image_ends) {
  int self = this_thread_id();
  write_lock_.lock(self);
  if (sampling()) {
    writer_.collect(self);
    if (image_ends)
      writer_.write_final(monotonic_ticks(), jfr::schema::kExeced);
    else
      writer_.write(monotonic_ticks());
  }
  write_lock_.unlock();
}

// A PHP request's end: its events go to the file now, since php-fpm kills its
// workers with SIGTERM at its default action.
void Recorder::flush_if_pending() {
  int self = this_thread_id();
  write_lock_.lock(self);
  bool ended = false;
  if (sampling()) {
    writer_.write_collected(self, jfr::schema::kBetweenRequests);
    ended = after_write();
  }
  write_lock_.unlock();
  tell_after_write(ended);
}

void Recorder::finish(FileLimit reason) {
  int self = this_thread_id();
  write_lock_.lock(self);
  if (recording()) {
    sink_.set_recording(false);
    ended_early_.store(false, std::memory_order_release);
    writer_.collect(self);
    writer_.write_final(monotonic_ticks(), reason);
    writer_.file().close();
  }
  write_lock_.unlock();
}

bool Recorder::flush_from_signal() {
  int self = this_thread_id();
  // Interrupted in the middle of the recorder: its locks, or the arena's (which
  // an addition to the stack table holds while it allocates), are this thread's.
  if (write_lock_.owner() == self || sink_.owned_by(self)) return false;
  // Others hold the locks only for short critical sections (the writer for one
  // append); give up after a second rather than hang the process's termination.
  uint64_t deadline = monotonic_ticks() + kWriteNanos;
  while (!write_lock_.try_lock(self)) {
    if (monotonic_ticks() >= deadline) return true;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  if (sampling()) {
    writer_.collect(self, deadline);
    writer_.write_final(monotonic_ticks());
  }
  write_lock_.unlock();
  return true;
}

Recorder::Status Recorder::status() {
  int self = this_thread_id();
  write_lock_.lock(self);
  writer_.collect(self);
  LiveHeap* live = sink_.live();
  Status s{recording(),
           ended_early_ ? jfr::schema::stop_reason_text(writer_.stop_reason()) : nullptr,
           writer_.file().path(),
           writer_.samples(),
           sink_.lost_samples(),
           live ? live->blocks() : 0,
           live ? static_cast<uint64_t>(std::max(live->live_bytes(), 0.0)) : 0};
  write_lock_.unlock();
  return s;
}

// The writer finishes its append, and no sampling thread is in the middle of a
// stripe, a stack addition or the live heap; the arena's lock comes after (agent.cpp).
void Recorder::before_fork() {
  int self = this_thread_id();
  write_lock_.lock(self);
  sink_.before_fork(self);
}

void Recorder::after_fork_in_parent() {
  sink_.after_fork();
  write_lock_.unlock();
}

void Recorder::after_fork_in_child() {
  t_state.tid_ = this_thread_id();
  sink_.after_fork();
  // The writer thread did not come along: the child's first sample starts its own.
  writer_thread_.state.store(background_flush_.load(std::memory_order_relaxed) ? WriterSignals::kNone : 0,
                             std::memory_order_relaxed);
  writer_thread_.write_wanted.store(0, std::memory_order_relaxed);
  // Drops the parent's unwritten events (the parent writes them) and its live blocks.
  if (sampling()) writer_.begin_generation();
  write_lock_.unlock();
}

bool Recorder::locked() const { return write_lock_.owner() != 0 || sink_.locked(); }

}  // namespace nmprof
