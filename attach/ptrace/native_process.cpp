#include "attach/ptrace/native_process.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>
#include <thread>
#include <vector>

#include "attach/fd_io.h"
#include "attach/ptrace/elf_symbols.h"
#include "attach/ptrace/interrupted_syscall.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/ptrace/ptrace_permission.h"
#include "attach/ptrace/safe_point.h"
#include "attach/ptrace/seized_thread.h"
#include "attach/ptrace/target_modules.h"
#include "attach/ptrace/thread_stack.h"
#include "attach/ptrace/tracee_wait.h"
#include "attach/seccomp_sandbox.h"
#include "attach/timeouts.h"
#include "protocol/attach_request.h"

namespace nmprof::attach {
namespace {

constexpr uint64_t kSigsegvBit = 1ULL << (SIGSEGV - 1);

std::string proc_path(pid_t pid, const std::string& name) { return "/proc/" + std::to_string(pid) + "/" + name; }

// Whether stopping a thread waiting in the call of a /proc/<pid>/task/<tid>/syscall
// line ("number arg1 ... arg6 sp pc") is safe under seccomp: not one that would resume
// through restart_syscall (interrupted_syscall.h), which a filter may refuse.
bool stoppable_under_seccomp(const std::string& line) {
  char* at = nullptr;
  int64_t number = strtoll(line.c_str(), &at, 10);
  uint64_t args[6] = {};
  for (uint64_t& arg : args) arg = strtoull(at, &at, 16);
  return !may_resume_through_restart_syscall(number, args);
}

// The threads to try, those waiting in an idle call first (stopping them costs
// the program nothing), then those running. Under seccomp (`sandboxed`), no thread
// in strict mode, nor one whose wait would resume through restart_syscall.
std::deque<pid_t> candidate_threads(pid_t pid, bool sandboxed) {
  std::vector<pid_t> idle, running;
  DIR* dir = opendir(proc_path(pid, "task").c_str());
  if (!dir) return {};
  while (dirent* entry = readdir(dir)) {
    pid_t tid = atoi(entry->d_name);
    if (tid <= 0) continue;
    auto syscall = read_text_at(AT_FDCWD, proc_path(pid, "task/" + std::string(entry->d_name) + "/syscall").c_str());
    if (!syscall || (sandboxed && seccomp_mode_of(pid, tid) == 1)) continue;
    if (syscall->rfind("running", 0) == 0)
      running.push_back(tid);
    else if (is_idle_syscall(strtoll(syscall->c_str(), nullptr, 10)) &&
             (!sandboxed || stoppable_under_seccomp(*syscall)))
      idle.push_back(tid);
  }
  closedir(dir);
  // The main thread first within each group: programs rarely mind its pauses.
  for (auto* group : {&idle, &running})
    for (size_t i = 0; i < group->size(); i++)
      if ((*group)[i] == pid) std::swap((*group)[0], (*group)[i]);
  std::deque<pid_t> candidates(idle.begin(), idle.end());
  candidates.insert(candidates.end(), running.begin(), running.end());
  return candidates;
}

bool blocks_sigsegv(pid_t pid, pid_t tid) {
  auto status = read_text_at(AT_FDCWD, proc_path(pid, "task/" + std::to_string(tid) + "/status").c_str());
  size_t at = status ? status->find("\nSigBlk:") : std::string::npos;
  return at == std::string::npos || (strtoull(status->c_str() + at + 8, nullptr, 16) & kSigsegvBit);
}

// Whether the call may run on the thread now (safe_point.h), and if not, why.
StackVerdict at_safe_point(const SeizedThread& thread, const TargetModules& modules) {
  auto in_call = static_cast<int64_t>(thread.registers().orig_rax);
  if (in_call >= 0 && !is_idle_syscall(in_call)) return {false, "in a system call that is not an idle wait"};
  ThreadStack stack = walk_thread_stack(thread.memory(), thread.registers(), modules);
  return judge_stack(stack.frames, stack.reached_entry);
}

Result<uint64_t> dlopen_of(const TargetProcess& target, const Mapping& libc) {
  auto found = remote_function(target, libc, "dlopen");
  // glibc before 2.34 has dlopen in libdl, which the program may not have loaded.
  if (!found) found = remote_function(target, libc, "__libc_dlopen_mode");
  return found;
}

Result<void> load_library(SeizedThread& thread, const TargetProcess& target, const Mapping& libc, uint64_t dlopen,
                          std::string_view library, Clock::time_point deadline) {
  auto handle = thread.call(dlopen, library, RTLD_NOW, deadline, "dlopen(\"" + std::string(library) + "\")");
  if (!handle) return handle.error();
  if (*handle != 0) return {};
  std::string why = "no reason given";
  if (auto dlerror = remote_function(target, libc, "dlerror")) {
    auto message = thread.call(*dlerror, "", 0, deadline, "dlerror()");
    if (message && *message) why = thread.read_string(*message);
  }
  return Error{"process " + std::to_string(target.pid) + " could not load " + std::string(library) + ": " + why};
}

Result<uint64_t> entry_point(const TargetProcess& target, const Mapping& agent) {
  auto entry = remote_function(target, agent, kNativeAttachEntryPoint);
  if (!entry)
    return Error{"the nmprof agent loaded in process " + std::to_string(target.pid) + " (" + agent.path +
                 ") is of a version without attach to native processes: " + entry.error().message};
  return entry;
}

// Whether thread `tid` of `pid` ends within 200 ms: an exiting thread is a zombie or
// gone by then, where one that refused for another reason is still running.
bool ends_soon(pid_t pid, pid_t tid) {
  for (int tries = 0; tries < 40; ++tries) {
    if (has_ended(pid) || thread_has_ended(pid, tid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace

std::vector<pid_t> descendants_with_nmprof(pid_t pid) {
  std::vector<std::pair<pid_t, pid_t>> parents;  // (process, its parent)
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      pid_t child = atoi(entry->d_name);
      auto stat = child > 0 ? read_text_at(AT_FDCWD, proc_path(child, "stat").c_str()) : std::nullopt;
      size_t end = stat ? stat->rfind(") ") : std::string::npos;
      if (end != std::string::npos && end + 4 < stat->size())
        parents.emplace_back(child, static_cast<pid_t>(atoi(stat->c_str() + end + 4)));  // after the state
    }
    closedir(proc);
  }
  std::vector<pid_t> descendants, found;
  std::vector<pid_t> frontier{pid};
  while (!frontier.empty()) {
    pid_t parent = frontier.back();
    frontier.pop_back();
    for (auto [child, its_parent] : parents)
      if (its_parent == parent) frontier.push_back(child), descendants.push_back(child);
  }
  for (pid_t child : descendants) {
    auto maps = read_text_at(AT_FDCWD, proc_path(child, "maps").c_str());
    if (maps && find_object(parse_maps(*maps), is_nmprof_agent)) found.push_back(child);
  }
  return found;
}

Result<NativeProcess> NativeProcess::find(pid_t pid, std::chrono::milliseconds timeout, bool force) {
  auto target = inspect_process(pid);
  if (!target) return target.error();
  std::string process = "process " + std::to_string(pid) + " (" + target->name + ")";
  char state = process_state(pid);
  if (state == 'Z' || state == 'X') return Error{process + " has exited"};
  // A debugger or strace holds it: a tracing stop ('t') is theirs, not the user's to end.
  if (tracer_of(pid) != 0) return Error{explain_ptrace_denied(*target)};
  if (state == 'T' || state == 't')
    return Error{process + " is stopped (SIGSTOP, Ctrl-Z or a debugger); resume it (`kill -CONT " +
                 std::to_string(pid) + "`, or detach the debugger) and attach again"};
  // Opening its memory takes the same rights as ptrace (Yama included): refused
  // here, with the reason, before anything else is tried.
  if (UniqueFd memory(open(proc_path(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC)); !memory) {
    if (errno == EACCES || errno == EPERM) return Error{explain_ptrace_denied(*target)};
    return Error{process + " has exited"};
  }
  auto maps = read_proc_file(*target, "maps");
  if (!maps) return maps.error();
  if (!find_object(parse_maps(*maps), is_libc)) {
    UniqueFd exe(open(proc_path(pid, "exe").c_str(), O_RDONLY | O_CLOEXEC));
    auto layout = exe ? read_elf_layout(exe.get()) : Result<ElfLayout>(Error{"unreadable"});
    if (layout && !layout->has_interpreter)
      return Error{process + " is statically linked: nmprof hooks allocations through the dynamic linker and "
                   "cannot profile it; link the program dynamically"};
    return Error{process + " has no C library (libc.so.6 or musl) loaded, through which nmprof loads its agent"};
  }
  if (target->status.signals_ignored & kSigsegvBit)
    return Error{process + " ignores SIGSEGV, which nmprof's injection relies on to regain control; start it "
                 "under nmprof instead: `nmprof run -- <command>`"};
  if (auto allowed = check_native_sandbox(*target, force); !allowed) return allowed.error();
  bool sandboxed = seccomp_sandbox_of(pid).has_value();
  return NativeProcess(std::move(*target), timeout, sandboxed);
}

Result<int> NativeProcess::load_agent(std::string_view library, std::string_view request) const {
  // Ctrl-C and kill end nmprof only once the thread it holds is put back (tracee_wait.h).
  TraceSignals held_back;
  auto deadline = Clock::now() + timeout_;
  auto maps_text = read_proc_file(target_, "maps");
  if (!maps_text) return maps_text.error();
  std::vector<Mapping> maps = parse_maps(*maps_text);
  auto libc = find_object(maps, is_libc);
  if (!libc) return Error{"process " + std::to_string(target_.pid) + " has no C library loaded"};
  auto with_agent = [&](std::string_view file_name) {
    return is_nmprof_agent(file_name) || file_name_of(library) == file_name;
  };
  // What the calls need is looked up before any thread stops: a thread is held for
  // the calls alone (and the agent's, when nmprof loads it, once it is loaded).
  auto dlopen = dlopen_of(target_, *libc);
  if (!dlopen) return dlopen.error();
  std::optional<uint64_t> entry;
  if (auto agent = find_object(maps, with_agent)) {
    auto found = entry_point(target_, *agent);
    if (!found) return found.error();
    entry = *found;
  }
  TargetModules modules(target_, maps);
  std::string last_refusal;
  auto ended_while_searching = [&] {
    return Error{"process " + std::to_string(target_.pid) + " exited while nmprof waited for a safe point"};
  };
  for (;;) {
    // Gone meanwhile (a Go program's raw exit_group, a crash): said so, not "no such process".
    if (has_ended(target_.pid)) return ended_while_searching();
    std::deque<pid_t> candidates = candidate_threads(target_.pid, sandboxed_);
    while (!candidates.empty()) {
      pid_t tid = candidates.front();
      candidates.pop_front();
      if (termination_requested()) return Error{"interrupted"};
      if (blocks_sigsegv(target_.pid, tid)) continue;
      auto thread = SeizedThread::seize(target_, tid, deadline);
      if (!thread) {
        // A thread seized as it exits fails (EPERM, or an exit where its stop was due) while
        // its /proc entry stays until it is reaped: it is given a moment to be seen ending.
        if (ends_soon(target_.pid, tid)) {
          if (has_ended(target_.pid)) return ended_while_searching();
          continue;
        }
        if (Clock::now() < deadline) return thread.error();
        last_refusal = "thread " + std::to_string(tid) + " did not stop (busy in the kernel?)";
        break;  // out of time
      }
      if (StackVerdict verdict = at_safe_point(*thread, modules); !verdict.safe) {
        last_refusal = "thread " + std::to_string(tid) + " was " + verdict.why;
        thread->release();  // untouched
        // Modules its stack needed are read while it runs; then it is looked at again.
        if (modules.read_missing()) candidates.push_front(tid);
        continue;
      }
      if (!entry) {
        if (auto loaded = load_library(*thread, target_, *libc, *dlopen, library, deadline); !loaded)
          return loaded.error();
        auto now_mapped = read_proc_file(target_, "maps");
        auto agent = now_mapped ? find_object(parse_maps(*now_mapped), with_agent) : std::nullopt;
        if (!agent) return Error{"process " + std::to_string(target_.pid) + " loaded " + std::string(library) +
                                 " but nmprof cannot find it in its memory map"};
        auto found = entry_point(target_, *agent);
        if (!found) return found.error();
        entry = *found;
      }
      auto code = thread->call(*entry, request, 0, deadline, std::string("the agent's ") + kNativeAttachEntryPoint);
      last_stop_ = thread->stopped_for();
      thread->release();
      if (!code) return code.error();
      return static_cast<int>(static_cast<uint32_t>(*code));
    }
    if (termination_requested()) return Error{"interrupted"};
    if (Clock::now() >= deadline) {
      return Error{"no thread of process " + std::to_string(target_.pid) +
                   " reached a point where it is safe to load a library within " + describe_duration(timeout_) +
                   " (one where no frame of its stack is in the C library, the dynamic loader, an allocator or "
                   "nmprof's agent, but for an idle call at its top" +
                   (last_refusal.empty() ? "" : "; the last one tried, " + last_refusal) +
                   "); attach again, or give it more time with --timeout"};
    }
    // A pause of varying length: a program's loop that alternates between a safe
    // point and an unsafe one is not looked at in step with it.
    std::this_thread::sleep_for(std::chrono::microseconds(500 + random() % 2000));
    maps_text = read_proc_file(target_, "maps");
    if (!maps_text) continue;  // ended: said at the top
    modules.update(parse_maps(*maps_text));
  }
}

}  // namespace nmprof::attach
