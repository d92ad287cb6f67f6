// Resolves native frames to functions: the symbol containing the return address in
// its module's symbol table (loaded on first use), as a method of a class named
// after the library; "libfoo.so+0x1a2b" (link-time address) where no symbol covers it.
// A module whose file is no longer the build that was loaded is named from the
// dynamic symbols the loaded image has in memory, and the log says so once.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "agent/stacks/frame_resolver.h"
#include "agent/stacks/modules.h"
#include "agent/symbols/symbol_table.h"

namespace nmprof {

class NativeFrameResolver : public FrameResolver {
 public:
  explicit NativeFrameResolver(const ModuleMap& modules) : modules_(modules) {}
  void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) override;
  uint32_t link_offset(const CallFrame& frame) override;
  void take_new_modules(std::vector<const Module*>& out) override;
  void forget_modules() override { announced_.clear(); }

  // The descriptor JFR tools need on every method; "()L;" shows as "()" in jfr print.
  static constexpr const char* kNativeDescriptor = "()L;";

 private:
  symbols::SymbolTable* symbols_of(const Module& module);
  std::unique_ptr<symbols::SymbolTable> load_symbols(const Module& module);

  const ModuleMap& modules_;
  std::unordered_map<const Module*, std::unique_ptr<symbols::SymbolTable>> tables_;  // null: unreadable
  // By pc, for the load of the code that was there: another library loaded at the
  // same address (after a dlclose) replaces the entry.
  struct CachedMethod {
    uint16_t load;
    uint32_t method;
  };
  std::unordered_map<uintptr_t, CachedMethod> methods_by_pc_;
  std::unordered_set<const Module*> announced_;  // in the current file
  std::vector<const Module*> new_modules_;
};

}  // namespace nmprof
