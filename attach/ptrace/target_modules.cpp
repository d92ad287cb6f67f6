#include "attach/ptrace/target_modules.h"

#include <algorithm>

#include "attach/ptrace/known_functions.h"

namespace nmprof::attach {
namespace {

constexpr std::string_view kVdso = "[vdso]";

bool is_libc_part(std::string_view name) {
  // libpthread and libdl were the C library's own before glibc 2.34.
  return is_libc(name) || name.substr(0, 10) == "libpthread" || name.substr(0, 5) == "libdl";
}

CodeKind kind_of(std::string_view file_name, const std::optional<TargetModule>& image) {
  if (is_libc_part(file_name)) return CodeKind::kLibc;
  if (is_dynamic_loader(file_name)) return CodeKind::kLoader;
  if (is_nmprof_agent(file_name)) return CodeKind::kAgent;
  if (!image) return CodeKind::kUnknown;
  // A library that defines malloc is an allocator; an executable that does is the
  // program's, whose allocator functions are known by name (describe()).
  if (!image->is_executable() && (image->exports("malloc") || image->exports("free"))) return CodeKind::kAllocator;
  return CodeKind::kProgram;
}

}  // namespace

const TargetModules::Module* TargetModules::module_at(uint64_t pc) const {
  const Mapping* code = nullptr;
  for (const Mapping& m : maps_)
    if (m.executable && pc >= m.start && pc < m.end) code = &m;
  if (!code) return nullptr;
  const Mapping* object = code->path == kVdso ? code : object_of(*code);
  if (!object) return nullptr;
  if (auto known = modules_.find(object->start); known != modules_.end()) return &known->second;
  if (std::none_of(missing_.begin(), missing_.end(), [&](const Mapping& m) { return m.start == object->start; }))
    missing_.push_back(*object);
  return nullptr;
}

bool TargetModules::read_missing() {
  for (const Mapping& object : missing_) modules_.try_emplace(object.start, read(object));
  bool read_some = !missing_.empty();
  missing_.clear();
  return read_some;
}

TargetModules::Module TargetModules::read(const Mapping& object) const {
  Module module;
  module.object = object;
  module.file_name = std::string(file_name_of(object.path));
  bool vdso = object.path == kVdso;
  auto image = vdso ? TargetModule::read_vdso(target_, object) : TargetModule::read(target_, object);
  if (image) module.image.emplace(std::move(*image));
  // The vDSO is the kernel's part of the C library (clock_gettime): it takes no lock.
  module.kind = vdso && module.image ? CodeKind::kLibc : kind_of(module.file_name, module.image);
  return module;
}

// The mapping at offset 0 of the file `code` maps: the nearest below it.
const Mapping* TargetModules::object_of(const Mapping& code) const {
  if (code.inode == 0 || code.path.empty() || code.path[0] != '/') return nullptr;
  const Mapping* object = nullptr;
  for (const Mapping& m : maps_)
    if (m.offset == 0 && m.inode == code.inode && m.dev_major == code.dev_major && m.dev_minor == code.dev_minor &&
        m.start <= code.start && (!object || m.start > object->start))
      object = &m;
  return object;
}

void TargetModules::update(std::vector<Mapping> maps) {
  maps_ = std::move(maps);
  missing_.clear();
  std::erase_if(modules_, [this](const auto& entry) {
    const Mapping& was = entry.second.object;
    return std::none_of(maps_.begin(), maps_.end(), [&was](const Mapping& m) {
      return m.start == was.start && m.offset == 0 && m.inode == was.inode && m.dev_major == was.dev_major &&
             m.dev_minor == was.dev_minor && m.path == was.path;
    });
  });
}

const unwind::FrameTable* TargetModules::table_for(uintptr_t pc) const {
  const Module* module = module_at(pc);
  return module && module->image ? &module->image->frames() : nullptr;
}

StackFrame TargetModules::describe(uint64_t pc, bool exact) const {
  uint64_t at = exact ? pc : pc - 1;
  StackFrame frame;
  frame.pc = pc;
  const Module* module = module_at(at);
  if (!module) return frame;
  frame.module = module->file_name;
  frame.kind = module->kind;
  if (module->image)
    for (const ElfFunction* f : module->image->functions_at(at)) frame.functions.push_back(f->name);
  if (frame.kind == CodeKind::kProgram)
    for (const std::string& name : frame.functions)
      if (is_allocator_function(name)) frame.kind = CodeKind::kAllocator;
  return frame;
}

uint64_t TargetModules::mapping_end(uint64_t address) const {
  for (const Mapping& m : maps_)
    if (address >= m.start && address < m.end) return m.end;
  return 0;
}

}  // namespace nmprof::attach
