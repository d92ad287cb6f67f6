#include "agent/agent.h"

#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "agent/safety/agent_memory.h"
#include "agent/safety/cancellation_off.h"
#include "agent/safety/exit_watch.h"
#include "agent/recording/clock.h"
#include "agent/safety/fatal_signals.h"
#include "agent/hooks/got_patcher.h"
#include "agent/hooks/hook_events.h"
#include "agent/hooks/hook_table.h"
#include "agent/java/java_runtime.h"
#include "agent/java/jvm_launch.h"
#include "agent/log.h"
#include "agent/stacks/modules.h"
#include "agent/stacks/native_frames.h"
#include "agent/php/php_runtime.h"
#include "agent/sampling/rate_limit.h"
#include "agent/recording/recorder.h"
#include "agent/sampling/sampler.h"
#include "agent/stacks/stack_capture.h"
#include "agent/safety/own_descriptors.h"
#include "agent/safety/termination_signals.h"
#include "agent/safety/unforked_child.h"
#include "agent/threads/thread_context.h"
#include "agent/stacks/thread_scratch.h"
#include "agent/symbols/loaded_image.h"
#include "agent/threads/thread_state.h"
#include "agent/writing/broker_client.h"
#include "common/safe_file.h"
#include "common/seccomp_status.h"

namespace nmprof {
namespace {

// Everything the running agent owns. Allocated once and never destroyed: other
// threads may still be inside a hook while the process exits.
struct Agent {
  AgentOptions options;
  ModuleMap modules;
  NativeFrameResolver native_resolver{modules};
  StackCapture capture{modules};
  JavaRuntime java;
  php::PhpRuntime php{native_resolver};
  // In the order their frames go onto a sampled stack. The recorder names frames
  // with PHP's resolver, which passes all but PHP's to the native one.
  Runtime* const runtimes[2] = {&java, &php};
  RateLimit rate;
  Recorder recorder{*php.frame_resolver(), rate};
  GotPatcher patcher{reinterpret_cast<const void*>(&start_agent)};
  SpinLock library_change_lock;
  unsigned long long patched_loads = 0;  // modules.loads() at the last patch pass (under the lock)
  // A dlopen left as the program made it ran: every write looks for what it loaded.
  std::atomic<bool> unseen_loads{false};
  std::atomic<bool> recording{false};
  bool exit_watched = false;  // preloaded, with the exit watch (exit_watch.h)
  AgentMode mode;
};

Agent* g_agent = nullptr;
// The thread in fork() between its prepare and child handlers (0: none).
std::atomic<int> g_forking_thread{0};
// The program put itself under a seccomp filter: the agent's work is over, and it
// makes no system call any more (on_seccomp_filter_coming).
std::atomic<bool> g_sealed{false};
// Whether the fork in progress went through before_fork() (a fork that began before
// the seal ends as it began).
bool g_fork_prepared = false;

// The sample weight of `added` bytes, 0 for none (LiveHeap::resized_weight).
float weight_of_added(const ThreadState& t, size_t added) { return added ? Sampler::weight(t, added) : 0.0f; }

void record_sample(ThreadState& t, const unwind::Registers& caller, void* p, size_t size, size_t before,
                   size_t counted, float tracked, jfr::schema::AllocatorKey allocator) {
  ThreadScratch* scratch = ThreadScratch::of_this_thread(g_agent->options.stack_depth);
  if (!scratch) return;
  CallStack stack{scratch->frames(), scratch->depth()};
  NativeWalkEnd end = g_agent->capture.capture(t, caller, stack, scratch->walk_pcs());
  for (Runtime* runtime : g_agent->runtimes) runtime->append_frames(t, end, stack, *scratch);
  // Allocated: what the call added (a realloc's growth); live: the whole block, with
  // the odds of the bytes it has been counted by, or, tracked already, its odds then
  // or those of this sample.
  size_t added = growth(before, size);
  float weight = Sampler::weight(t, added);
  float live = Sampler::weight(t, counted ? counted : size);
  if (tracked) live = LiveHeap::resized_weight(tracked, added ? weight : 0.0f, live);
  g_agent->recorder.record_allocation(t, stack, reinterpret_cast<uintptr_t>(p), size, weight, allocator, before, live);
}

__attribute__((noinline)) void record_guarded_sample(ThreadState& t, const unwind::Registers& caller, void* p,
                                                     size_t size, size_t before, size_t counted, float tracked,
                                                     jfr::schema::AllocatorKey allocator) {
  AgentGuard guard;
  record_sample(t, caller, p, size, before, counted, tracked, allocator);
  // Before the next countdown is drawn, so that it is drawn with the new interval.
  if (g_agent->rate.active()) Sampler::set_interval(g_agent->rate.on_sample(monotonic_ticks()));
}

// quick_exit() runs neither exit handlers nor destructors: only these.
void finish_at_quick_exit() { on_process_ending(); }

// The arena's lock is taken last: the recorder's lock holder may be allocating.
void before_fork() {
  g_fork_prepared = !g_sealed.load(std::memory_order_acquire);
  if (!g_fork_prepared) return;
  g_forking_thread.store(t_state.id(), std::memory_order_relaxed);
  g_agent->recorder.before_fork();
  agent_memory::before_fork();
}
void after_fork_in_parent() {
  if (!g_fork_prepared) return;
  agent_memory::after_fork();
  g_agent->recorder.after_fork_in_parent();
  g_forking_thread.store(0, std::memory_order_relaxed);
}

// In the exit watch, once every thread of the process has gone without ending its
// recording (a raw exit_group, SIGKILL): its last write, from the memory they left,
// unless one of them died in the middle of the recorder or of the agent's memory.
void finish_after_death(int file) {
  if (!g_agent || g_agent->recorder.locked() || agent_memory::locked()) return;
  AgentGuard guard;
  g_agent->recorder.finish_after_death(file);
}

// Once the recording's file is there.
void start_exit_watch() {
  if (!g_agent->exit_watched || exit_watch::running()) return;
  int file = g_agent->recorder.open_file_again();
  if (file >= 0) exit_watch::start(file, finish_after_death);
}


// Go programs end by a raw exit_group. The Go linker gives every executable its
// build id in a note named "Go", of type 4 (NT_GO_BUILDID), which says which they are.
bool main_program_is_go() {
  bool go = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* go) {
        *static_cast<bool*>(go) = symbols::has_loaded_note(*info, "Go", 4);
        return 1;  // the first is the program
      },
      &go);
  return go;
}

// Preloaded. A watch shares the program's memory, and so could run the program's code
// with whatever the program had as the watch was made: never in a process that may
// give privileges up. A Go program without one is told what it loses.
void choose_exit_watch(const AgentOptions& options) {
  int pid = static_cast<int>(getpid());
  if (!options.exit_watch) {
    if (main_program_is_go())
      log_line("process %d is a Go program, which ends by a raw exit_group: its recording lacks its last second "
               "and its live memory at the end (nmprof run --exit-watch records them)",
               pid);
    return;
  }
  if (exit_watch::holds_privileges()) {
    log_line("process %d runs with privileges it may give up (root, capabilities or set-id): no exit watch, "
             "which would keep them",
             pid);
    return;
  }
  g_agent->exit_watched = true;
  exit_watch::remember_thread();  // the main thread, at load
  // A program that may end before the agent's first write: its file and watch now.
  g_agent->recorder.open_file_now();
  start_exit_watch();
}

void after_fork_in_child() {
  g_forking_thread.store(0, std::memory_order_relaxed);
  int parent_tid = t_state.tid_;
  agent_memory::after_fork();
  CancellationOff no_cancel;
  AgentGuard guard;
  // Locks and work in progress of threads that did not come along.
  g_agent->patcher.reset_lock();
  g_agent->library_change_lock.unlock();
  g_agent->modules.after_fork_in_child();
  reset_context_lock_after_fork();
  own_descriptors::after_fork_in_child();
  exit_watch::forget_after_fork();
  g_agent->recorder.after_fork_in_child();
  for (Runtime* runtime : g_agent->runtimes) runtime->after_fork_in_child(parent_tid, t_state.id());
  // Siblings forked from one parent (a server's workers) would otherwise draw the
  // same samples from the parent's random state. The countdown is restored from
  // saved_countdown when the guard ends.
  g_process_id = static_cast<int>(getpid());
  Sampler::seed(t_state, static_cast<uint64_t>(g_process_id));
  t_state.saved_countdown = Sampler::next_gap(t_state);
  unforked_child::mark_followed();
}

// A child made without fork() (unforked_child.h): the first of its threads to enter
// the agent does what fork()'s child handler does, when no thread of the parent was
// in the middle of the recorder or the agent's memory as the child was made; else
// the agent stays out of the child for good (its copy cannot be trusted). In a
// fork() child whose handler has not run yet, the forking thread stays out until it has.
__attribute__((noinline)) bool follow_unforked_child() {
  if (g_forking_thread.load(std::memory_order_relaxed) == t_state.tid_ || !unforked_child::claim()) return false;
  if (g_agent->recorder.locked() || agent_memory::locked()) {
    log_line("process %d was made without fork() while the agent was at work in another thread: not profiled",
             static_cast<int>(getpid()));
    return false;
  }
  after_fork_in_child();
  return true;
}

// Whether the agent may work here: not in a child made without fork() that it could
// not follow. One load in the process itself. A kernel that cannot tell such a
// child from a vfork() child: both are left alone (a system call to tell).
bool followed() {
  if (!g_agent) return true;
  if (g_sealed.load(std::memory_order_relaxed)) return false;
  if (!unforked_child::g_mark) return getpid() == g_agent->recorder.pid();
  return !unforked_child::unfollowed() || follow_unforked_child();
}

// The malloc family, whose slots a recording that ended gives back.
constexpr uint64_t kAllocationHooks = (uint64_t{1} << (kPvalloc + 1)) - 1;
static_assert(kMalloc == 0 && kPvalloc < kDlopen, "the allocation hooks come first");

// The recording ended before the process (its file reached a limit or could not be
// written, or the agent ran out of memory): nothing more is sampled, and the
// allocation slots are given back, so that the program then runs as fast as without
// nmprof (the recording itself is finished as usual, at exit or by attach's stop). A
// hook stays where the program copied its address out of a slot (a function
// pointer), and in PHP's heap, whose handlers are only put back from an attach's stop
// (a request may be in them): there it passes every call on without sampling it.
void on_recording_ended() {
  if (!g_agent || !followed()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  g_agent->patcher.retire(kAllocationHooks);
  exit_watch::end();
}

// After each periodic write: the libraries that dlopens left as the program made
// them loaded since (on_libraries_loading_unseen) get their slots patched.
void on_recording_written() {
  if (g_agent->unseen_loads.load(std::memory_order_relaxed)) on_libraries_changed(false);
  start_exit_watch();
}

bool flush_for_signal() {
  if (!followed()) return true;
  CancellationOff no_cancel;
  return g_agent->recorder.flush_from_signal();
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

Settings settings_of(const AgentOptions& o, AgentMode mode) {
  const char* mode_name = mode == AgentMode::Preload ? "preload" : mode == AgentMode::JvmStartup ? "jvm" : "attach";
  return {{"nativemem", std::to_string(o.interval)},
          {"rate", std::to_string(o.rate)},
          {"stackdepth", std::to_string(o.stack_depth)},
          {"live", o.live ? "true" : "false"},
          {"maxtracked", std::to_string(tracked_blocks_cap(o))},
          {"maxsize", std::to_string(o.max_size)},
          {"file", o.file},
          {"mode", mode_name},
          {"attributes", joined(o.context_attributes)}};
}

// The parts that live as long as the process, made once.
bool create_agent(AgentMode mode) {
  auto* agent = new (std::nothrow) Agent;
  if (!agent) {
    log_line("out of memory at start; not profiling");
    return false;
  }
  agent->mode = mode;
  agent->recorder.on_ended_early(on_recording_ended);
  agent->recorder.on_written(on_recording_written);
  if (!ThreadScratch::init()) {
    log_line("cannot create thread-local storage; not profiling");
    return false;
  }
  look_up_default_targets();
  g_process_id = static_cast<int>(getpid());
  safe_file::set_descriptor_ops({own_descriptors::open_held, own_descriptors::close_held});
  agent->modules.refresh();
  g_agent = agent;
  unforked_child::watch();
  pthread_atfork(before_fork, after_fork_in_parent, [] {
    if (g_fork_prepared) after_fork_in_child();
  });
  at_quick_exit(finish_at_quick_exit);
  if (mode == AgentMode::Preload) {
    install_termination_handlers(flush_for_signal);
    // A JVM handles SIGSEGV itself (and writes its own crash report).
    if (!agent->modules.has_jvm()) install_fatal_handlers(flush_for_signal);
  }
  return true;
}

}  // namespace

// Hooks tail-call this, so its return address is in the caller of malloc: the walk
// starts there, from this function's frame pointer, instead of unwinding the agent.
// No object with a destructor in this frame: a thread cancelled asynchronously here
// is unwound straight through it (cancellation_off.h), and the cancellation put off
// while it samples is acted on once the sample is taken.
void* on_sampled_allocation(void* p, size_t size, jfr::schema::AllocatorKey allocator, size_t before,
                            size_t counted, float tracked) {
  ThreadState& t = t_state;
  if (!adds_bytes(before, size) || !Sampler::confirm(t, growth(before, size))) return p;
  if (p && g_agent && g_agent->recording.load(std::memory_order_relaxed) && g_agent->recorder.sampling() &&
      followed()) {
    auto* frame = static_cast<uintptr_t*>(__builtin_frame_address(0));
    unwind::Registers caller{frame[1], reinterpret_cast<uintptr_t>(frame + 2), frame[0]};
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    record_guarded_sample(t, caller, p, size, before, counted, tracked, allocator);
    restore_cancellation(cancel_state);
  }
  Sampler::restart(t);
  resume_deferred_signal();
  return p;
}

namespace {

// The parts with objects to clean up, each in a frame of its own (below).

// What a runtime frees, or reallocs, of what its program still held as it ended stays
// live in the recording as it was (the PHP CLI's shutdown, ZendMM on or off): the
// blocks born before the returned ticks (0: none).
uint64_t leftovers_born_before(ThreadState& t) {
  uint64_t kept_if_born_before = 0;
  for (Runtime* runtime : g_agent->runtimes)
    if (uint64_t since = runtime->leftovers_born_before(t)) kept_if_born_before = since;
  return kept_if_born_before;
}

__attribute__((noinline)) void settle_guarded(const TakenBlock& taken, bool freed) {
  AgentGuard guard;
  g_agent->recorder.settle_block(t_state, taken.block, taken.taken_at, freed, leftovers_born_before(t_state));
}

// Whether a block a realloc resized stays tracked. Not a leftover (forgotten, as its
// free would be). Counted by fewer bytes than before (shrunk), a block has better
// odds of being tracked than its new weight says: it stays with the odds of its new
// weight against its old one, else leaves the live set, so that a tracked block's
// weight is always one over the odds that it is tracked (unbiased live estimates).
bool stays_tracked(ThreadState& t, const TakenBlock& taken, float weight) {
  if (taken.block.ticks < leftovers_born_before(t)) return false;
  return weight <= taken.block.weight || Sampler::chance(t, taken.block.weight / weight);
}

__attribute__((noinline)) void move_guarded(const TakenBlock& taken, void* to, size_t size, float weight,
                                            bool stays) {
  AgentGuard guard;
  if (stays)
    g_agent->recorder.move_block(t_state, taken.block, taken.taken_at, reinterpret_cast<uintptr_t>(to), size, weight);
  else
    g_agent->recorder.settle_block(t_state, taken.block, taken.taken_at, true, leftovers_born_before(t_state));
}

__attribute__((noinline)) void record_guarded_free(void* p) {
  AgentGuard guard;
  g_agent->recorder.record_free(t_state, reinterpret_cast<uintptr_t>(p), leftovers_born_before(t_state));
}

}  // namespace

// On the free path, as on_sampled_allocation: no object with a destructor in these
// frames, and no cancellation while the live heap's locks are held. Taking a block,
// and resizing it in place, reach no cancellation point and allocate nothing: they
// run as the hook's own instructions do, with the host's cancellation (which cannot
// be asynchronous around a realloc: realloc is not async-cancel-safe). A string
// appended to in a loop is taken and resized on every append.
bool take_tracked_block(void* p, TakenBlock* out) {
  if (!p || !g_agent || !followed()) return false;
  return g_agent->recorder.take_block(t_state, reinterpret_cast<uintptr_t>(p), &out->block, &out->taken_at);
}

void settle_taken_block(const TakenBlock& taken, bool freed) {
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  settle_guarded(taken, freed);
  restore_cancellation(cancel_state);
}

void move_taken_block(const TakenBlock& taken, void* to, size_t size, size_t added, size_t counted) {
  ThreadState& t = t_state;
  float weight = LiveHeap::resized_weight(taken.block.weight, weight_of_added(t, added), Sampler::weight(t, counted));
  bool stays = stays_tracked(t, taken, weight);
  if (stays && reinterpret_cast<uintptr_t>(to) == taken.block.address)
    return g_agent->recorder.move_block(t, taken.block, taken.taken_at, taken.block.address, size, weight);
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  move_guarded(taken, to, size, weight, stays);
  restore_cancellation(cancel_state);
}

bool grow_in_place(void* p, size_t size, size_t added, size_t counted) {
  if (!g_agent || !followed()) return true;  // as take_tracked_block: nothing tracked
  ThreadState& t = t_state;
  if (leftovers_born_before(t)) return false;
  return g_agent->recorder.grow_block(t, reinterpret_cast<uintptr_t>(p), size, weight_of_added(t, added),
                                      Sampler::weight(t, counted));
}

void on_tracked_free(void* p) {
  if (!g_agent || !followed()) return;
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  record_guarded_free(p);
  restore_cancellation(cancel_state);
}

void on_libraries_changed(bool deepbind) {
  if (!g_agent || !g_agent->recording.load(std::memory_order_relaxed) || !followed()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  g_agent->library_change_lock.lock(this_thread_id());
  if (g_agent->modules.refresh() && g_agent->modules.has_jvm()) remove_fatal_handlers();
  // A pass when modules were loaded since the last one, whichever call notices them:
  // a dlclose in one thread may be first to see what another thread's dlopen loaded.
  if (g_agent->modules.loads() != g_agent->patched_loads) {
    g_agent->patcher.patch_all(deepbind);
    if (g_agent->patcher.complete()) g_agent->patched_loads = g_agent->modules.loads();
  }
  g_agent->library_change_lock.unlock();
  for (Runtime* runtime : g_agent->runtimes) runtime->checkpoint();
}

void on_libraries_loading_unseen() {
  if (g_agent) g_agent->unseen_loads.store(true, std::memory_order_relaxed);
}

void on_runtime_checkpoint() {
  if (!g_agent) return;
  for (Runtime* runtime : g_agent->runtimes) {
    if (!runtime->checkpoint_due() || !followed()) continue;
    AgentGuard guard;
    runtime->checkpoint();
  }
}

void on_runtime_request_end(jfr::schema::AllocatorKey allocator, bool heap_reset) {
  if (!g_agent || !followed()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  if (heap_reset) g_agent->recorder.forget_blocks_of(t_state, allocator);
  // A server's request ended: what it recorded is written now. Its worker may be
  // killed before the next write: php-fpm's master stops its workers with SIGTERM and,
  // a moment later, SIGKILL, which may cut short the write of the agent's SIGTERM
  // handler; the file then ends here, saying the worker was between requests.
  g_agent->recorder.flush_if_pending();
}

void on_process_image_ending(const char* program) {
  if (!g_agent || !g_agent->recording.load(std::memory_order_relaxed) || !followed()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  if (getpid() == g_agent->recorder.pid()) {
    g_agent->recorder.flush(true);
    exit_watch::end();  // it would keep this image's memory; a failed exec's next write starts another
  } else {  // a vfork() child, which shares our memory until it execs: only nmprof is told
    broker_client::tell_exec(program);
  }
}

void on_user_id_changing() {
  if (!g_agent || !g_agent->recording.load(std::memory_order_relaxed) || !followed()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  if (getpid() == g_agent->recorder.pid()) g_agent->recorder.open_file_now();
}

void on_process_ending() {
  // A vfork() child that failed to exec ends here too: the recording is its parent's.
  if (g_agent && followed() && getpid() == g_agent->recorder.pid()) finish_agent();
}

void on_seccomp_filter_coming() {
  // Not in a vfork() child, which shares the parent's agent until it execs (the next
  // image starts under the filter: under_unchecked_seccomp).
  if (!g_agent || !followed() || getpid() != g_agent->recorder.pid()) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  bool was_recording = g_agent->recording.exchange(false);
  if (was_recording) g_agent->recorder.finish(jfr::schema::kSeccompFilter);
  exit_watch::end();
  g_agent->recorder.end_writer_thread();
  remove_termination_handlers();
  remove_fatal_handlers();
  g_agent->patcher.restore_all();
  for (Runtime* runtime : g_agent->runtimes) runtime->stop();
  g_sealed.store(true, std::memory_order_release);
  if (was_recording)
    log_line("process %d puts itself under a seccomp filter: its recording ends here, as the agent's system calls "
             "could be refused",
             static_cast<int>(g_agent->recorder.pid()));
}

// A process under seccomp filters that nmprof did not check (AgentOptions::
// seccomp_checked) may be killed for any system call it did not plan for: the
// agent's writer, stacks and hooks make several. It stays out of such a process.
bool under_unchecked_seccomp(const AgentOptions& options) {
  SeccompStatus status = parse_seccomp_status(own_descriptors::read_held_file("/proc/self/status"));
  if (!status.filtered() || status.filter_count() <= static_cast<int>(options.seccomp_checked)) return false;
  log_line("process %d runs under %d seccomp filter(s) that nmprof did not check: not profiling it (a filter may "
           "kill it for the agent's system calls; under `nmprof run` nmprof checks the filters it runs under itself)",
           static_cast<int>(getpid()), status.filter_count());
  return true;
}

bool start_agent(const AgentOptions& options, AgentMode mode) {
  CancellationOff no_cancel;
  AgentGuard guard;
  if (g_sealed.load(std::memory_order_acquire)) return false;
  if (!g_agent && (under_unchecked_seccomp(options) || !create_agent(mode))) return false;
  if (g_agent->recording.load(std::memory_order_acquire)) return true;
  Agent* agent = g_agent;
  agent->options = options;
  broker_client::connect(options.broker_fd, options.broker_inode);
  if (agent->options.file.empty()) agent->options.file = "nmprof-%p.jfr";
  // Relative to where the process started: it may chdir() later (daemons go to /).
  char cwd[4096];
  if (agent->options.file[0] != '/' && getcwd(cwd, sizeof cwd))
    agent->options.file = std::string(cwd) + "/" + agent->options.file;
  agent->rate.start(options.rate, options.interval, monotonic_ticks());
  Sampler::set_interval(agent->rate.interval());
  for (int id = 0; id < kHookCount; id++)
    agent->patcher.set_enabled(static_cast<HookId>(id), id != kFree || options.live);
  // Attached, the file exists at once: the CLI holds it open, so that what the JVM
  // recorded can be collected even if it exits (in a container, with its /tmp).
  declare_context_attributes(options.context_attributes);
  // Attached through ptrace, this is the thread nmprof stopped: in a PHP CLI (one
  // thread) the engine's, as at preload.
  Settings settings = settings_of(agent->options, mode);
  for (Runtime* runtime : agent->runtimes) {
    if (mode == AgentMode::Preload || (mode == AgentMode::NativeAttach && !runtime->found()))
      runtime->find(t_state.id());
    else if (mode == AgentMode::NativeAttach)
      runtime->rearm();
    if (std::string description = runtime->description(); !description.empty())
      settings.push_back({"runtime", description});
  }
  agent->recorder.limit_file_size(options.max_size);
  agent->recorder.show_file_as(options.output);
  agent->recorder.start(agent->options.file, settings, options.live ? tracked_blocks_cap(options) : 0,
                        mode == AgentMode::JvmAttach || mode == AgentMode::NativeAttach, options.tags,
                        options.context_attributes);
  agent->recording.store(true, std::memory_order_release);
  if (mode == AgentMode::Preload) choose_exit_watch(options);
  agent->patcher.patch_all();
  // Attached, PHP's heap exists already: its handlers go in now.
  if (mode == AgentMode::NativeAttach)
    for (Runtime* runtime : agent->runtimes) runtime->checkpoint();
  return true;
}

void stop_agent() {
  finish_agent();
  AgentGuard guard;
  // Restored slots cost nothing; a thread still inside a hook finishes normally.
  if (!g_agent || !followed()) return;
  g_agent->patcher.restore_all();
  for (Runtime* runtime : g_agent->runtimes) runtime->stop();
}

Recorder* agent_recorder() { return g_agent && followed() ? &g_agent->recorder : nullptr; }

bool process_followed() { return followed(); }

void set_java_stacks(JavaStacks* stacks) {
  if (g_agent) g_agent->java.set_stacks(stacks);
}

void* on_symbol_lookup(const char* name, void* found) {
  // The java launcher (or any program embedding a JVM) about to create one while the
  // agent is preloaded: the JVM is to load the agent too.
  if (g_agent && g_agent->mode == AgentMode::Preload && strcmp(name, "JNI_CreateJavaVM") == 0)
    return wrap_create_java_vm(found);
  return found;
}

void finish_agent() {
  if (!g_agent || !followed() || !g_agent->recording.exchange(false)) return;
  CancellationOff no_cancel;
  AgentGuard guard;
  g_agent->recorder.finish();
  exit_watch::end();
}

}  // namespace nmprof
