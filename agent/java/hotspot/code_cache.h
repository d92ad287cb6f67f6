// HotSpot's code as the stack walker sees it: the template interpreter, the call
// stub's return point (where Java is entered from C++), and the CodeBlobs of the
// code heaps, found from a pc through each heap's segment map the way
// CodeHeap::find_start does. Setup reads the VM's tables with fault-safe copies;
// lookups then read only committed code heap memory and take no lock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/java/hotspot/checked_memory.h"
#include "agent/java/hotspot/vm_layout.h"

namespace nmprof::hotspot {

enum class BlobKind : uint8_t {
  kNmethod,        // compiled Java code
  kNativeWrapper,  // an nmethod wrapping a native method
  kOther,          // stubs, adapters, runtime blobs
};

struct CodeBlobView {
  AddressRange blob;  // the whole blob, inside committed code heap memory
  AddressRange code;  // its instructions
  BlobKind kind = BlobKind::kOther;
  int frame_words = 0;  // the frame's size, return address included
};

class CodeCache {
 public:
  explicit CodeCache(const VmLayout& layout) : layout_(layout) {}
  CodeCache(const CodeCache&) = delete;
  CodeCache& operator=(const CodeCache&) = delete;

  // Needs the VM initialised (code heaps, interpreter and stubs generated).
  bool init(std::string* why_not);

  bool in_interpreter(uintptr_t pc) const { return interpreter_.contains(pc, 1); }
  bool is_call_stub_return(uintptr_t pc) const { return pc == call_stub_return_; }
  // The blob holding `pc`, or nullopt if none does or its memory looks wrong.
  std::optional<CodeBlobView> find_blob(uintptr_t pc) const;

 private:
  struct Heap {
    uintptr_t object = 0;    // the CodeHeap, which lives as long as the VM
    AddressRange reserved;   // its address range; memory is committed from the start up
    uintptr_t segmap = 0;    // one byte per segment
    int log2_segment_size = 0;
  };
  static constexpr int kMaxHeaps = 8;
  static constexpr int kMaxSegments = 8;

  BlobKind kind_of(uintptr_t blob) const;
  bool name_is(uintptr_t name, const char* expected) const;

  const VmLayout& layout_;
  Heap heaps_[kMaxHeaps];
  int heap_count_ = 0;
  AddressRange interpreter_;
  uintptr_t call_stub_return_ = 0;
  AddressRange libjvm_[kMaxSegments];  // libjvm's readable segments, where blob names are
  int libjvm_count_ = 0;
};

}  // namespace nmprof::hotspot
