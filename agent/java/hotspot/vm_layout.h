// Everything the frame classifier reads from HotSpot, resolved once from VMStructs:
// field offsets and widths, static addresses, constants. JDK 17 and JDK 25 differ
// in places (see resolve_vm_layout); a field that neither form provides disables
// the classifier instead of being guessed.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "agent/java/hotspot/vm_structs.h"

namespace nmprof::hotspot {

// A field of some HotSpot object.
struct FieldRef {
  uint32_t offset = 0;
  uint8_t size = 0;  // 1, 2, 4 or 8 bytes
  bool is_signed = false;

  // The value, from a copy of the object's bytes or the mapped object itself.
  int64_t value_in(const void* object) const {
    const unsigned char* p = static_cast<const unsigned char*>(object) + offset;
    switch (size) {
      case 1: return is_signed ? static_cast<int64_t>(load<int8_t>(p)) : load<uint8_t>(p);
      case 2: return is_signed ? static_cast<int64_t>(load<int16_t>(p)) : load<uint16_t>(p);
      case 4: return is_signed ? static_cast<int64_t>(load<int32_t>(p)) : load<uint32_t>(p);
      default: return load<int64_t>(p);
    }
  }
  uintptr_t address_in(const void* object) const { return static_cast<uintptr_t>(value_in(object)); }
  uint32_t end() const { return offset + size; }

 private:
  template <typename T>
  static T load(const unsigned char* p) {
    T value;
    std::memcpy(&value, p, sizeof value);
    return value;
  }
};

// An address-valued property of an nmethod: a pointer field, or an offset field
// added to the nmethod's start or to its immutable data (JDK 25).
struct AddressRef {
  enum class Base : uint8_t { kNone, kBlob, kImmutableData };
  FieldRef field;
  Base base = Base::kNone;
};

struct VmLayout {
  int jdk_version = 0;  // Abstract_VM_Version::_vm_major_version

  // JavaThread and the frame anchors (JavaFrameAnchor in JavaThread and JavaCallWrapper)
  uint64_t java_thread_size = 0;
  FieldRef thread_state, stack_base, stack_size;
  uint32_t thread_anchor = 0;
  FieldRef anchor_sp, anchor_fp, anchor_pc;
  uint32_t call_wrapper_anchor = 0;
  uint64_t call_wrapper_size = 0;
  int state_in_native = 0, state_in_vm = 0, state_blocked = 0;

  // x86_64 frame slots, in words from rbp
  int entry_frame_call_wrapper_slot = 0;
  int interpreter_sender_sp_slot = 0;

  // Static addresses
  uintptr_t code_heaps = 0;                // CodeCache::_heaps (GrowableArray<CodeHeap*>*)
  uintptr_t interpreter_code = 0;          // AbstractInterpreter::_code (StubQueue*)
  uintptr_t call_stub_return_address = 0;  // StubRoutines::_call_stub_return_address

  // GrowableArray, StubQueue, CodeHeap with its VirtualSpaces, HeapBlock
  FieldRef array_length, array_data;
  FieldRef queue_buffer, queue_buffer_limit;
  uint64_t code_heap_size = 0;
  uint32_t heap_memory = 0, heap_segmap = 0;
  FieldRef heap_log2_segment_size;
  FieldRef space_low_boundary, space_high_boundary, space_low, space_high;
  uint64_t heap_block_size = 0;
  FieldRef block_length, block_used;

  // CodeBlob
  uint64_t code_blob_size = 0;
  FieldRef blob_name, blob_size, blob_frame_size;
  std::optional<FieldRef> blob_kind;  // JDK 25; JDK 17 blobs are told apart by name
  int kind_nmethod = 0;
  AddressRef code_begin, code_end;

  // nmethod
  uint64_t nmethod_size = 0;
  std::optional<FieldRef> comp_level;  // without it C1 code is not told from C2 code
  AddressRef deopt_handler, deopt_mh_handler;
  std::optional<FieldRef> immutable_data, immutable_data_size;  // JDK 25: debug info on the C heap
  AddressRef pcs_begin, pcs_end, scopes_begin, scopes_end;

  // PcDesc and the debug information stream
  uint64_t pc_desc_size = 0;
  FieldRef pc_offset, scope_decode_offset;
  bool debug_ints_exclude_zero = false;  // JDK 20+ UNSIGNED5 (JDK-8292758): no 0 byte
};

// Resolves the layout; false with a one-line reason (naming what is missing) if the
// VM lacks something.
bool resolve_vm_layout(const VmStructs& vm, VmLayout* layout, std::string* why_not);

}  // namespace nmprof::hotspot
