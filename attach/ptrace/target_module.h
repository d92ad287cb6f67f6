// One module mapped in the target (its executable or a shared object), read from the
// very file it mapped: the unwind rules of its .eh_frame, compiled by the agent's own
// unwinder (agent/unwind/), and its functions, both at the addresses they have in the
// target. What a walk of a stopped thread's stack needs to tell where each frame is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/unwind/frame_table.h"
#include "attach/ptrace/elf_symbols.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

class TargetModule {
 public:
  // `object`: the module's mapping at file offset 0.
  static Result<TargetModule> read(const TargetProcess& target, const Mapping& object);
  // The kernel's vDSO (clock_gettime and friends), which has no file: its image is
  // read from the target's memory.
  static Result<TargetModule> read_vdso(const TargetProcess& target, const Mapping& vdso);

  const std::string& path() const { return path_; }
  // The module's rules, for pcs of the target. Empty when its file has none.
  const unwind::FrameTable& frames() const { return frames_; }
  // The functions whose range holds the target address `pc` (aliases of one
  // function: several), innermost range first; none where the symbol tables say nothing.
  std::vector<const ElfFunction*> functions_at(uint64_t pc) const;
  // Whether it exports a function `name` (in .dynsym).
  bool exports(std::string_view name) const;
  // The program's executable (it names an interpreter), not a shared library.
  bool is_executable() const { return is_executable_; }

 private:
  TargetModule(std::string path, uint64_t bias, bool is_executable, std::vector<ElfFunction> functions,
               unwind::FrameTable frames)
      : path_(std::move(path)),
        bias_(bias),
        is_executable_(is_executable),
        functions_(std::move(functions)),
        frames_(std::move(frames)) {}
  // The module whose ELF image `fd` holds, loaded at `start` in the target.
  static Result<TargetModule> from_image(int fd, std::string path, uint64_t start);

  std::string path_;
  uint64_t bias_;  // a target address is bias_ + an ELF value
  bool is_executable_;
  std::vector<ElfFunction> functions_;
  unwind::FrameTable frames_;
};

}  // namespace nmprof::attach
