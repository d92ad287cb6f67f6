#include "agent/stacks/native_frames.h"

#include <cinttypes>
#include <cstdio>

#include "agent/symbols/vdso.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

symbols::SymbolTable* NativeFrameResolver::symbols_of(const Module& module) {
  auto [it, added] = tables_.try_emplace(&module);
  if (added) {
    std::string error;
    if (module.is_vdso) {
      it->second = symbols::SymbolTable::from_memory(symbols::vdso_image(), &error);
    } else if (!module.path.empty()) {
      it->second = symbols::SymbolTable::from_file(module.path, &error);
    }
  }
  return it->second.get();
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

void NativeFrameResolver::take_new_modules(std::vector<std::pair<std::string, std::string>>& out) {
  for (const Module* m : new_modules_) out.emplace_back(m->name, m->path);
  new_modules_.clear();
}

}  // namespace nmprof
