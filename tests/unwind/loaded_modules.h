// A minimal module registry for the tests: every module loaded when it is built,
// with its FrameTable, looked up by the pc ranges of its executable segments.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/unwind/frame_table_builder.h"
#include "agent/unwind/stack_walker.h"

namespace nmprof::unwind::test {

struct LoadedModule {
  std::string path;  // "" for the main executable, as dl_iterate_phdr says
  uintptr_t load_bias = 0;
  std::vector<MemoryRange> code;
  FrameTableBuild build;
};

class LoadedModules final : public FrameTableLookup {
 public:
  LoadedModules();

  // The modules of this process at its first use.
  static const LoadedModules& instance();

  const FrameTable* table_for(uintptr_t pc) const override;
  const LoadedModule* module_for(uintptr_t pc) const;
  // The first module whose path ends with `suffix`.
  const LoadedModule* find(std::string_view suffix) const;
  std::span<const LoadedModule> modules() const { return modules_; }

 private:
  std::vector<LoadedModule> modules_;
};

}  // namespace nmprof::unwind::test
