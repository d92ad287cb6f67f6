// The loaded modules (executable, shared libraries, vDSO) as the stack walker and the
// symbolizer need them: address ranges, file paths, and per-module unwind and symbol
// tables built on first use. Lookups by address are lock-free: refresh() publishes
// a new sorted snapshot and never frees a module or an old snapshot, because a
// thread may be walking a stack through them at that moment.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/symbols/image_identity.h"
#include "agent/symbols/loaded_image.h"
#include "agent/unwind/frame_table.h"
#include "agent/unwind/frame_table_builder.h"

namespace nmprof {

// Reaches the program that runs, even once its path names another file.
inline constexpr const char* kExecutable = "/proc/self/exe";

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
  bool is_executable;  // the program itself
  std::vector<unwind::MemoryRange> readable;  // its readable segments
  // Which build was loaded (its build id, its file when first seen): the file its
  // names are read from must still be it, and a library unloaded and another (or the
  // same path rebuilt) loaded at the same address is another module.
  symbols::ImageIdentity identity;
  symbols::LoadedImage image;  // where its dynamic symbols are in memory
  // Which load this is, counted per process from 1: native frames carry it, so
  // frames at the same address in code loaded at different times are told apart.
  uint16_t load;
  const Module* made_before;  // the module made before this one (ModuleMap::newest_)

  bool contains(uintptr_t pc) const { return pc >= start && pc < end; }
  // The unwind table, compiled on first use (a module with frames on some stack
  // cannot be unloaded meanwhile); a thread that needs it while another compiles it
  // waits for it.
  const unwind::FrameTable& frame_table() const;
  // After fork() in the child: a thread that was compiling the table is gone.
  void forget_unfinished_table() const { building_.store(false, std::memory_order_relaxed); }

 private:
  mutable std::atomic<bool> building_{false};
  mutable std::atomic<const unwind::FrameTable*> table_{nullptr};  // null until compiled
};

class ModuleMap {
 public:
  // Re-reads the loaded modules; returns true when the set changed.
  bool refresh();
  // How many modules had been loaded (dl_phdr_info::dlpi_adds) at the last refresh().
  unsigned long long loads() const { return loads_seen_; }
  const Module* find(uintptr_t pc) const;
  // The module of that load containing pc, even if it was unloaded since (its frames
  // are named after the fact, by the writer); null if none.
  const Module* find(uintptr_t pc, uint16_t load) const;
  // After fork() in the child: no module is being worked on any more.
  void after_fork_in_child() const;
  // Bumped by every change, so per-thread caches of find() know when to forget.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // libjvm.so is loaded: a JVM runs here, or is about to.
  bool has_jvm() const { return has_jvm_.load(std::memory_order_relaxed); }
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
  std::atomic<const Module*> newest_{nullptr};  // every module ever made, newest first
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> has_jvm_{false};
  unsigned long long loads_seen_ = 0;  // dl_iterate_phdr's adds/subs when last read
  unsigned long long unloads_seen_ = 0;
  uint16_t loads_ = 0;  // the last Module::load given out
  friend struct ModuleScan;
};

}  // namespace nmprof
