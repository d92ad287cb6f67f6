// The modules of the target as a stack walk needs them: which one holds a pc, its
// unwind rules (agent/unwind's FrameTableLookup, so that the agent's walker walks
// the target's stacks), and what kind of code it is (safe_point.h). A walk that
// meets a module not read yet stops there (its thread is not safe) and notes it:
// read_missing() reads it afterwards, once the thread runs again, so that no thread
// stays stopped while files are read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "agent/unwind/stack_walker.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/ptrace/safe_point.h"
#include "attach/ptrace/target_module.h"
#include "attach/target_process.h"

namespace nmprof::attach {

class TargetModules final : public unwind::FrameTableLookup {
 public:
  TargetModules(const TargetProcess& target, std::vector<Mapping> maps) : target_(target), maps_(std::move(maps)) {}

  // The target's memory map changed: modules still mapped where they were keep
  // what was read of them.
  void update(std::vector<Mapping> maps);

  // Reads the modules walks met since the last call. False when there were none.
  bool read_missing();

  const unwind::FrameTable* table_for(uintptr_t pc) const override;

  // The frame at `pc` (a return address unless `exact`: looked up at pc - 1).
  StackFrame describe(uint64_t pc, bool exact) const;

  // The end of the mapping that holds `address` (a thread's stack), or 0.
  uint64_t mapping_end(uint64_t address) const;

 private:
  struct Module {
    Mapping object;
    std::string file_name;
    CodeKind kind = CodeKind::kUnknown;
    std::optional<TargetModule> image;  // none when its file cannot be read
  };
  // The module whose code holds `pc`; nullptr outside every module, or when it is
  // not read yet (then noted as missing).
  const Module* module_at(uint64_t pc) const;
  const Mapping* object_of(const Mapping& code) const;
  Module read(const Mapping& object) const;

  const TargetProcess& target_;
  std::vector<Mapping> maps_;
  std::map<uint64_t, Module> modules_;        // by the start of their offset-0 mapping
  mutable std::vector<Mapping> missing_;      // offset-0 mappings of modules to read
};

}  // namespace nmprof::attach
