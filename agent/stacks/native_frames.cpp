#include "agent/stacks/native_frames.h"

#include <cinttypes>
#include <cstdio>

#include "agent/log.h"
#include "agent/symbols/vdso.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

symbols::SymbolTable* NativeFrameResolver::symbols_of(const Module& module) {
  auto [it, added] = tables_.try_emplace(&module);
  if (added) it->second = load_symbols(module);
  return it->second.get();
}

std::unique_ptr<symbols::SymbolTable> NativeFrameResolver::load_symbols(const Module& module) {
  std::string error;
  if (module.is_vdso) return symbols::SymbolTable::from_memory(symbols::vdso_image(), &error);
  if (module.path.empty()) return nullptr;
  // The program is read through kExecutable, which stays the image that runs.
  bool replaced = false;
  auto table = symbols::SymbolTable::from_loaded_file(
      {module.path, module.is_executable ? kExecutable : module.path, module.identity}, &error, &replaced);
  if (!table && module.is_executable && !replaced)  // no /proc
    table = symbols::SymbolTable::from_loaded_file({module.path, module.path, module.identity}, &error, &replaced);
  if (table) return table;
  // The loaded image's own dynamic symbols, while it is loaded: an unloaded module's
  // memory may hold another one by now.
  std::string ignored;
  if (modules_.find(module.start) == &module) table = symbols::SymbolTable::from_loaded_image(module.image, &ignored);
  // A file that was there when the module was first seen changed since.
  if (replaced || module.identity.size != 0)
    log_line("%s: %s %s (%s): its functions are named from %s", module.name.c_str(), module.path.c_str(),
             replaced ? "is not the build that was loaded" : "cannot be read any more", error.c_str(),
             table ? "the exported symbols of the loaded image, the others module+offset" : "module+offset");
  return table;
}

void NativeFrameResolver::resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) {
  line = -1;
  uintptr_t pc = frame.id;
  auto cached = methods_by_pc_.find(pc);
  if (cached != methods_by_pc_.end() && cached->second.load == frame.load) {
    method = cached->second.method;
    return;
  }
  const Module* module = modules_.find(pc, frame.load);
  uint32_t klass = pools.klass(module ? module->name : "[unknown]");
  std::optional<symbols::Symbol> symbol;
  if (module) {
    if (symbols::SymbolTable* table = symbols_of(*module)) symbol = table->find(pc - 1 - module->bias);
  }
  if (symbol) {
    method = pools.method(klass, symbol->name, kNativeDescriptor, jfr::schema::kAccNative);
  } else {
    char address[32];
    snprintf(address, sizeof address, "0x%" PRIxPTR, module ? pc - module->bias : pc);
    std::string label = module ? module->name + "+" + address : std::string(address);
    method = pools.method(klass, label, kNativeDescriptor, jfr::schema::kAccNative);
  }
  methods_by_pc_[pc] = {frame.load, method};
}

uint32_t NativeFrameResolver::link_offset(const CallFrame& frame) {
  const Module* module = modules_.find(frame.id, frame.load);
  if (!module || module->is_vdso || frame.id - module->bias > UINT32_MAX) return 0;
  if (announced_.insert(module).second) new_modules_.push_back(module);
  return static_cast<uint32_t>(frame.id - module->bias);
}

void NativeFrameResolver::take_new_modules(std::vector<const Module*>& out) {
  out.insert(out.end(), new_modules_.begin(), new_modules_.end());
  new_modules_.clear();
}

}  // namespace nmprof
