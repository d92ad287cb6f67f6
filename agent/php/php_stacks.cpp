#include "agent/php/php_stacks.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <new>

#include "agent/php/engine_memory.h"
#include "agent/php/zend_layout.h"
#include "agent/recording/clock.h"

namespace nmprof::php {
namespace {

namespace L = layout82;

// Deeper PHP stacks than this are cut (and marked truncated) rather than followed.
constexpr int kMaxPhpFrames = 512;

FileEntry entry_of(uint32_t include_kind) {
  switch (include_kind) {
    case L::kInclude: return FileEntry::Include;
    case L::kIncludeOnce: return FileEntry::IncludeOnce;
    case L::kRequire: return FileEntry::Require;
    case L::kRequireOnce: return FileEntry::RequireOnce;
    case L::kEval: return FileEntry::Eval;
    default: return FileEntry::None;
  }
}

// A file's top-level code runs in a frame of its own; the caller's instruction says
// whether it was included, required or eval'd.
FileEntry file_entry(uintptr_t caller) {
  if (!caller) return FileEntry::None;
  uintptr_t func = load_pointer(caller, L::kExecuteFunc);
  if (!func || load<uint8_t>(func, L::kFunctionType) != L::kUserFunction) return FileEntry::None;
  uintptr_t opline = load_pointer(caller, L::kExecuteOpline);
  if (!opline || load<uint8_t>(opline, L::kOpOpcode) != L::kIncludeOrEval) return FileEntry::None;
  return entry_of(load<uint32_t>(opline, L::kOpExtendedValue));
}

}  // namespace

PhpStacks* PhpStacks::create(void* executor_globals, int engine_thread) {
  void* executor = dlsym(RTLD_DEFAULT, "execute_ex");
  Dl_info info;
  void* entry = nullptr;
  if (!executor || !dladdr1(executor, &info, &entry, RTLD_DL_SYMENT) || !entry) return nullptr;
  auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol->st_size == 0) return nullptr;
  auto begin = reinterpret_cast<uintptr_t>(executor);
  return new (std::nothrow)
      PhpStacks(reinterpret_cast<uintptr_t>(executor_globals), begin, begin + symbol->st_size, engine_thread);
}

size_t PhpStacks::executor_frame(const CallStack& stack) const {
  for (size_t i = 0; i < stack.depth; i++)
    if (stack.frames[i].id >= executor_begin_ && stack.frames[i].id < executor_end_) return i;
  return stack.depth;
}

uint64_t PhpStacks::shutdown_began(ThreadState& t) {
  if (serving_ || t.id() != engine_thread_ || !(load<uint8_t>(executor_globals_, L::kFlags) & L::kInShutdown))
    return 0;
  if (!shutdown_began_) shutdown_began_ = monotonic_ticks();
  return shutdown_began_;
}

void PhpStacks::append(ThreadState& t, CallStack& stack) {
  if (t.id() != engine_thread_) return;
  uintptr_t frame = load_pointer(executor_globals_, L::kCurrentExecuteData);
  if (!frame) return;  // not running PHP code: compiling, starting or shutting down
  // The executor and what called it (the SAPI, main) are replaced by the PHP frames.
  size_t executor = executor_frame(stack);
  if (executor < stack.depth) {
    stack.depth = executor;
    stack.truncated = false;
  }
  for (int n = 0; frame; n++) {
    uintptr_t caller = load_pointer(frame, L::kExecutePrev);
    uintptr_t func = load_pointer(frame, L::kExecuteFunc);
    if (n == kMaxPhpFrames || stack.full()) {
      stack.truncated = true;
      return;
    }
    if (func) {
      uint8_t type = load<uint8_t>(func, L::kFunctionType);
      int32_t line = 0;
      uint64_t entry = 0;
      if (type == L::kUserFunction || type == L::kEvalCode) {
        uintptr_t opline = load_pointer(frame, L::kExecuteOpline);
        if (opline) line = static_cast<int32_t>(load<uint32_t>(opline, L::kOpLineno));
        if (!load_pointer(func, L::kFunctionName)) entry = static_cast<uint64_t>(file_entry(caller));
      }
      stack.push({func | entry, line, jfr::schema::kPhp, false});
    }
    frame = caller;
  }
}

}  // namespace nmprof::php
