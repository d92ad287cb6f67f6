#include "tests/unwind/loaded_modules.h"

#include <link.h>

namespace nmprof::unwind::test {

LoadedModules::LoadedModules() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* self) {
        LoadedModule module;
        module.path = info->dlpi_name ? info->dlpi_name : "";
        module.load_bias = info->dlpi_addr;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type == PT_LOAD && (segment.p_flags & PF_X)) {
            uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
            module.code.push_back(MemoryRange{begin, begin + segment.p_memsz});
          }
        }
        module.build = build_frame_table(*info);
        static_cast<LoadedModules*>(self)->modules_.push_back(std::move(module));
        return 0;
      },
      this);
}

const LoadedModules& LoadedModules::instance() {
  static const LoadedModules modules;
  return modules;
}

const LoadedModule* LoadedModules::module_for(uintptr_t pc) const {
  for (const LoadedModule& module : modules_) {
    for (const MemoryRange& range : module.code) {
      if (range.begin <= pc && pc < range.end) return &module;
    }
  }
  return nullptr;
}

const FrameTable* LoadedModules::table_for(uintptr_t pc) const {
  const LoadedModule* module = module_for(pc);
  return module ? &module->build.table : nullptr;
}

const LoadedModule* LoadedModules::find(std::string_view suffix) const {
  for (const LoadedModule& module : modules_) {
    if (module.path.ends_with(suffix)) return &module;
  }
  return nullptr;
}

}  // namespace nmprof::unwind::test
