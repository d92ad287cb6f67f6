// The loaded modules (executable, shared libraries, vDSO) as the stack walker and the
// symbolizer need them: address ranges, file paths, and per-module unwind and symbol
// tables built on first use. Lookups by address are lock-free: refresh() publishes
// a new sorted snapshot and never frees a module or an old snapshot, because a
// thread may be walking a stack through them at that moment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/unwind/frame_table.h"
#include "agent/unwind/frame_table_builder.h"

namespace nmprof {

struct Module {
  std::string path;  // file on disk ("" for the vDSO)
  std::string name;  // basename: the JFR "class" of its frames
  uintptr_t bias;    // load bias: runtime address = link-time address + bias
  uintptr_t start;   // mapped range [start, end)
  uintptr_t end;
  const void* phdr;  // identifies this mapping among modules loaded at the same bias
  const void* eh_frame_hdr;  // PT_GNU_EH_FRAME contents, or null
  size_t eh_frame_hdr_size;
  bool is_vdso;
  bool is_jvm;  // libjvm.so: its frames are the VM's own ("C++")
  std::vector<unwind::MemoryRange> readable;  // its readable segments

  bool contains(uintptr_t pc) const { return pc >= start && pc < end; }
  // The unwind table, compiled on first use (a module with frames on some stack
  // cannot be unloaded meanwhile); a thread that needs it while another compiles it
  // waits for it.
  const unwind::FrameTable& frame_table() const;

 private:
  mutable std::atomic<int> table_state_{0};  // 0 none, 1 building, 2 built
  mutable unwind::FrameTable table_;  // read only once table_state_ is 2
};

class ModuleMap {
 public:
  // Re-reads the loaded modules; returns true when the set changed.
  bool refresh();
  const Module* find(uintptr_t pc) const;
  // Bumped by every change, so per-thread caches of find() know when to forget.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Where libjvm.so is mapped (empty range without a JVM): its frames are "C++".
  bool in_jvm(uintptr_t pc) const {
    return pc >= jvm_start_.load(std::memory_order_relaxed) && pc < jvm_end_.load(std::memory_order_relaxed);
  }
  template <typename Visit>
  void for_each(Visit visit) const {
    const Snapshot* s = snapshot_.load(std::memory_order_acquire);
    for (size_t i = 0; s && i < s->count; i++) visit(*s->modules[i]);
  }

 private:
  struct Snapshot {
    size_t count;
    const Module* modules[1];  // count entries, sorted by start
  };
  std::atomic<const Snapshot*> snapshot_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<uintptr_t> jvm_start_{0};
  std::atomic<uintptr_t> jvm_end_{0};
  unsigned long long loads_seen_ = 0;  // dl_iterate_phdr's adds/subs when last read
  unsigned long long unloads_seen_ = 0;
};

}  // namespace nmprof
