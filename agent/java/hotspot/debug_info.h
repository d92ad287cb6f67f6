// An nmethod's debug information, decoded the way HotSpot's vframeStream does: a
// table of PcDescs, sorted by pc offset between a sentinel at each end, names the
// scope recorded for each call site; each scope starts with the offset of its
// caller's scope (0 for the outermost), so the length of that chain is the number
// of virtual frames at the pc: the compiled method and the methods inlined into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "agent/java/hotspot/checked_memory.h"
#include "agent/java/hotspot/code_cache.h"
#include "agent/java/hotspot/vm_layout.h"

namespace nmprof::hotspot {

// Decodes one int of a debug information stream (CompressedReadStream::read_int:
// Pack200's UNSIGNED5; since JDK 20 with byte 0 excluded). Returns the bytes used,
// 0 if `bytes` ends first or holds an excluded byte.
size_t decode_debug_int(const uint8_t* bytes, size_t available, bool exclude_zero, uint32_t* value);

class NmethodDebugInfo {
 public:
  // The ranges of `nmethod`'s PcDescs and scopes; false if they look wrong. JDK 25
  // keeps them outside the code cache, so they are then read fault-safely.
  bool open(const VmLayout& layout, const CodeBlobView& nmethod);

  // The scope decode offset of the PcDesc at `pc`, or with `approximate` of the
  // first PcDesc after pc (nmethod::find_pc_desc); nullopt if there is none.
  std::optional<int> scope_at(uintptr_t pc, bool approximate);

  // The virtual frames of the scope at `decode_offset`, counted as vframeStream
  // counts them (an absent or out-of-range scope is one frame); 0 if the chain is
  // corrupt.
  int virtual_frames(int decode_offset);

 private:
  std::optional<int64_t> field(uintptr_t object, FieldRef f);

  const VmLayout* layout_ = nullptr;
  std::optional<ObjectBytes> bytes_;  // the nmethod or its immutable data
  AddressRange pcs_;
  AddressRange scopes_;
  uintptr_t code_begin_ = 0;
};

}  // namespace nmprof::hotspot
