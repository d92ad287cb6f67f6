#include "agent/java/hotspot/vm_layout.h"

#include <initializer_list>
#include <string>
#include <string_view>

#include "agent/java/hotspot/checked_memory.h"

namespace nmprof::hotspot {
namespace {

constexpr uint64_t kMaxObjectSize = 1 << 16;

// Looks things up in VMStructs; the first one missing is what init reports.
class Resolver {
 public:
  Resolver(const VmStructs& vm, std::string* why_not) : vm_(vm), why_not_(why_not) {}

  bool failed() const { return failed_; }

  // An instance field of the first of `owners` that declares it (HotSpot moves
  // fields between a class and its superclass across versions).
  std::optional<FieldRef> optional_field(std::initializer_list<std::string_view> owners, std::string_view name) {
    for (std::string_view owner : owners) {
      std::optional<VmField> f = vm_.field(owner, name);
      if (!f || f->is_static || f->offset >= kMaxObjectSize) continue;
      std::optional<FieldRef> ref = width_of(f->type_string);
      if (!ref) continue;
      ref->offset = static_cast<uint32_t>(f->offset);
      return ref;
    }
    return std::nullopt;
  }
  FieldRef field(std::initializer_list<std::string_view> owners, std::string_view name) {
    std::optional<FieldRef> f = optional_field(owners, name);
    if (!f) missing(*owners.begin(), name);
    return f.value_or(FieldRef{});
  }
  // The offset of an embedded object, whatever its type.
  uint32_t offset(std::string_view owner, std::string_view name) {
    std::optional<VmField> f = vm_.field(owner, name);
    if (!f || f->is_static || f->offset >= kMaxObjectSize) return missing(owner, name), 0;
    return static_cast<uint32_t>(f->offset);
  }
  uintptr_t static_address(std::string_view owner, std::string_view name) {
    std::optional<VmField> f = vm_.field(owner, name);
    if (!f || !f->is_static || f->address == 0) return missing(owner, name), 0;
    return f->address;
  }
  uint64_t size(std::string_view type) {
    std::optional<VmType> t = vm_.type(type);
    if (!t || t->size == 0 || t->size >= kMaxObjectSize) return missing(type, ""), 0;
    return t->size;
  }
  int constant(std::string_view name) {
    std::optional<int32_t> c = vm_.int_constant(name);
    if (!c) return missing(name, ""), 0;
    return *c;
  }
  void fail(std::string reason) {
    if (!failed_ && why_not_) *why_not_ = std::move(reason);
    failed_ = true;
  }

 private:
  // Pointers are 8 bytes; other types are sized by the type table.
  std::optional<FieldRef> width_of(std::string_view type) {
    if (type.find('*') != std::string_view::npos || type == "address") return FieldRef{0, 8, false};
    for (std::string_view qualifier : {"volatile ", "const "}) {
      if (type.starts_with(qualifier)) type.remove_prefix(qualifier.size());
    }
    std::optional<VmType> t = vm_.type(type);
    if (!t || (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)) return std::nullopt;
    return FieldRef{0, static_cast<uint8_t>(t->size), !t->is_unsigned};
  }
  void missing(std::string_view owner, std::string_view name) {
    std::string what(owner);
    if (!name.empty()) what.append("::").append(name);
    fail("VMStructs has no usable " + what);
  }

  const VmStructs& vm_;
  std::string* why_not_;
  bool failed_ = false;
};

// A pointer field if the VM has it, else an offset field from the blob's start
// (JDK 17 keeps code_begin and deopt handlers as pointers, JDK 25 as offsets).
AddressRef pointer_or_offset(Resolver& r, std::initializer_list<std::string_view> owners,
                             std::string_view pointer_name, std::string_view offset_name) {
  if (std::optional<FieldRef> f = r.optional_field(owners, pointer_name)) return {*f, AddressRef::Base::kNone};
  return {r.field(owners, offset_name), AddressRef::Base::kBlob};
}

}  // namespace

bool resolve_vm_layout(const VmStructs& vm, VmLayout* layout, std::string* why_not) {
  Resolver r(vm, why_not);
  VmLayout l;

  uintptr_t version = r.static_address("Abstract_VM_Version", "_vm_major_version");
  if (version && !read_self(version, &l.jdk_version, sizeof l.jdk_version)) r.fail("unreadable VM version");

  l.java_thread_size = r.size("JavaThread");
  l.thread_state = r.field({"JavaThread"}, "_thread_state");
  l.stack_base = r.field({"JavaThread", "Thread"}, "_stack_base");
  l.stack_size = r.field({"JavaThread", "Thread"}, "_stack_size");
  l.thread_anchor = r.offset("JavaThread", "_anchor");
  l.anchor_sp = r.field({"JavaFrameAnchor"}, "_last_Java_sp");
  l.anchor_fp = r.field({"JavaFrameAnchor"}, "_last_Java_fp");
  l.anchor_pc = r.field({"JavaFrameAnchor"}, "_last_Java_pc");
  l.call_wrapper_anchor = r.offset("JavaCallWrapper", "_anchor");
  l.call_wrapper_size = r.size("JavaCallWrapper");
  l.state_in_native = r.constant("_thread_in_native");
  l.state_in_vm = r.constant("_thread_in_vm");
  l.state_blocked = r.constant("_thread_blocked");

  l.entry_frame_call_wrapper_slot = r.constant("frame::entry_frame_call_wrapper_offset");
  l.interpreter_sender_sp_slot = r.constant("frame::interpreter_frame_sender_sp_offset");

  l.code_heaps = r.static_address("CodeCache", "_heaps");
  l.interpreter_code = r.static_address("AbstractInterpreter", "_code");
  l.call_stub_return_address = r.static_address("StubRoutines", "_call_stub_return_address");

  l.array_length = r.field({"GrowableArrayBase"}, "_len");
  l.array_data = r.field({"GrowableArray<int>"}, "_data");  // the same offset for every element type
  l.queue_buffer = r.field({"StubQueue"}, "_stub_buffer");
  l.queue_buffer_limit = r.field({"StubQueue"}, "_buffer_limit");
  l.code_heap_size = r.size("CodeHeap");
  l.heap_memory = r.offset("CodeHeap", "_memory");
  l.heap_segmap = r.offset("CodeHeap", "_segmap");
  l.heap_log2_segment_size = r.field({"CodeHeap"}, "_log2_segment_size");
  l.space_low_boundary = r.field({"VirtualSpace"}, "_low_boundary");
  l.space_high_boundary = r.field({"VirtualSpace"}, "_high_boundary");
  l.space_low = r.field({"VirtualSpace"}, "_low");
  l.space_high = r.field({"VirtualSpace"}, "_high");
  l.heap_block_size = r.size("HeapBlock");
  uint32_t header = r.offset("HeapBlock", "_header");
  l.block_length = r.field({"HeapBlock::Header"}, "_length");
  l.block_used = r.field({"HeapBlock::Header"}, "_used");
  l.block_length.offset += header;
  l.block_used.offset += header;

  l.code_blob_size = r.size("CodeBlob");
  l.blob_name = r.field({"CodeBlob"}, "_name");
  l.blob_size = r.field({"CodeBlob"}, "_size");
  l.blob_frame_size = r.field({"CodeBlob"}, "_frame_size");
  l.blob_kind = r.optional_field({"CodeBlob"}, "_kind");
  if (l.blob_kind) l.kind_nmethod = r.constant("CodeBlobKind::Nmethod");
  l.code_begin = pointer_or_offset(r, {"CodeBlob"}, "_code_begin", "_code_offset");
  l.code_end = pointer_or_offset(r, {"CodeBlob"}, "_code_end", "_data_offset");

  l.nmethod_size = r.size("nmethod");
  l.comp_level = r.optional_field({"nmethod", "CompiledMethod"}, "_comp_level");
  l.deopt_handler =
      pointer_or_offset(r, {"nmethod", "CompiledMethod"}, "_deopt_handler_begin", "_deopt_handler_offset");
  l.deopt_mh_handler =
      pointer_or_offset(r, {"nmethod", "CompiledMethod"}, "_deopt_mh_handler_begin", "_deopt_mh_handler_offset");
  l.immutable_data = r.optional_field({"nmethod"}, "_immutable_data");
  FieldRef pcs_offset = r.field({"nmethod"}, "_scopes_pcs_offset");
  if (l.immutable_data) {
    // JDK 25: scopes pcs, then scopes data, in the immutable data on the C heap.
    l.immutable_data_size = r.field({"nmethod"}, "_immutable_data_size");
    FieldRef data_offset = r.field({"nmethod"}, "_scopes_data_offset");
    l.pcs_begin = {pcs_offset, AddressRef::Base::kImmutableData};
    l.pcs_end = {data_offset, AddressRef::Base::kImmutableData};
    l.scopes_begin = l.pcs_end;
    l.scopes_end = {*l.immutable_data_size, AddressRef::Base::kImmutableData};
  } else {
    // Before: scopes data, scopes pcs, dependencies, inside the nmethod.
    l.scopes_begin = {r.field({"nmethod", "CompiledMethod"}, "_scopes_data_begin"), AddressRef::Base::kNone};
    l.scopes_end = {pcs_offset, AddressRef::Base::kBlob};
    l.pcs_begin = {pcs_offset, AddressRef::Base::kBlob};
    l.pcs_end = {r.field({"nmethod"}, "_dependencies_offset"), AddressRef::Base::kBlob};
  }

  l.pc_desc_size = r.size("PcDesc");
  l.pc_offset = r.field({"PcDesc"}, "_pc_offset");
  l.scope_decode_offset = r.field({"PcDesc"}, "_scope_decode_offset");
  l.debug_ints_exclude_zero = l.jdk_version >= 20;

  if (r.failed()) return false;
  if (l.jdk_version < 17) {
    r.fail("JDK " + std::to_string(l.jdk_version) + " is not supported (17 or later is)");
    return false;
  }
  // Every field must lie inside its object as the type table sizes it.
  auto in = [](uint64_t object_size, uint32_t base, std::initializer_list<FieldRef> fields) {
    for (const FieldRef& f : fields) {
      if (base + f.end() > object_size) return false;
    }
    return true;
  };
  bool inside =
      in(l.java_thread_size, 0, {l.thread_state, l.stack_base, l.stack_size}) &&
      in(l.java_thread_size, l.thread_anchor, {l.anchor_sp, l.anchor_fp, l.anchor_pc}) &&
      in(l.call_wrapper_size, l.call_wrapper_anchor, {l.anchor_sp, l.anchor_fp, l.anchor_pc}) &&
      in(l.code_heap_size, 0, {l.heap_log2_segment_size}) &&
      in(l.code_heap_size, l.heap_memory, {l.space_low_boundary, l.space_high_boundary, l.space_low, l.space_high}) &&
      in(l.code_heap_size, l.heap_segmap, {l.space_low, l.space_high}) &&
      in(l.heap_block_size, 0, {l.block_length, l.block_used}) &&
      in(l.code_blob_size, 0, {l.blob_name, l.blob_size, l.blob_frame_size, l.code_begin.field, l.code_end.field}) &&
      (!l.blob_kind || in(l.code_blob_size, 0, {*l.blob_kind})) &&
      in(l.nmethod_size, 0,
         {l.deopt_handler.field, l.deopt_mh_handler.field, l.pcs_begin.field, l.pcs_end.field,
          l.scopes_begin.field, l.scopes_end.field}) &&
      (!l.comp_level || in(l.nmethod_size, 0, {*l.comp_level})) &&
      (!l.immutable_data || in(l.nmethod_size, 0, {*l.immutable_data})) &&
      in(l.pc_desc_size, 0, {l.pc_offset, l.scope_decode_offset}) && l.code_blob_size <= l.nmethod_size;
  if (!inside) {
    r.fail("VMStructs sizes and offsets do not fit together");
    return false;
  }
  *layout = l;
  return true;
}

}  // namespace nmprof::hotspot
