#include "agent/java/hotspot/code_cache.h"

#include <link.h>

#include <algorithm>
#include <cstring>

namespace nmprof::hotspot {
namespace {

// HotSpot's CodeHeap::free_sentinel: a segment no block uses.
constexpr uint8_t kFreeSegment = 0xFF;
// Segment map chains are kept short by HotSpot's defragmentation; a longer one is
// taken as a wrong map.
constexpr int kMaxHops = 1 << 12;

// A field of an object the caller has not validated: copied fault-safely.
std::optional<int64_t> read_field(uintptr_t object, FieldRef field) {
  unsigned char bytes[8];
  if (!read_self(object + field.offset, bytes, field.size)) return std::nullopt;
  FieldRef at_start = field;
  at_start.offset = 0;
  return at_start.value_in(bytes);
}

std::optional<uintptr_t> read_pointer(uintptr_t address) {
  uintptr_t value;
  if (!read_self(address, &value, sizeof value)) return std::nullopt;
  return value;
}

// A field of mapped memory.
int64_t load(uintptr_t object, FieldRef field) { return field.value_in(reinterpret_cast<const void*>(object)); }

}  // namespace

bool CodeCache::init(std::string* why_not) {
  auto fail = [&](const char* reason) {
    if (why_not) *why_not = reason;
    return false;
  };
  const VmLayout& l = layout_;
  heap_count_ = libjvm_count_ = 0;

  std::optional<uintptr_t> heaps = read_pointer(l.code_heaps);
  std::optional<int64_t> count = heaps ? read_field(*heaps, l.array_length) : std::nullopt;
  std::optional<int64_t> data = heaps ? read_field(*heaps, l.array_data) : std::nullopt;
  if (!count || !data || *count <= 0 || *count > kMaxHeaps) return fail("unexpected CodeCache::_heaps");
  for (int i = 0; i < *count; i++) {
    std::optional<uintptr_t> object = read_pointer(static_cast<uintptr_t>(*data) + i * sizeof(uintptr_t));
    if (!object) return fail("unreadable code heap list");
    uintptr_t memory = *object + l.heap_memory;
    std::optional<int64_t> low = read_field(memory, l.space_low);
    std::optional<int64_t> low_boundary = read_field(memory, l.space_low_boundary);
    std::optional<int64_t> high_boundary = read_field(memory, l.space_high_boundary);
    std::optional<int64_t> segmap = read_field(*object + l.heap_segmap, l.space_low);
    std::optional<int64_t> log2 = read_field(*object, l.heap_log2_segment_size);
    if (!low || !low_boundary || !high_boundary || !segmap || !log2 || *low != *low_boundary ||
        *high_boundary <= *low || *segmap == 0 || *log2 < 4 || *log2 > 20) {
      return fail("unexpected code heap layout");
    }
    heaps_[heap_count_++] = {*object, {static_cast<uintptr_t>(*low), static_cast<uintptr_t>(*high_boundary)},
                             static_cast<uintptr_t>(*segmap), static_cast<int>(*log2)};
  }

  std::optional<uintptr_t> queue = read_pointer(l.interpreter_code);
  std::optional<int64_t> buffer = queue ? read_field(*queue, l.queue_buffer) : std::nullopt;
  std::optional<int64_t> limit = queue ? read_field(*queue, l.queue_buffer_limit) : std::nullopt;
  if (!buffer || !limit || *buffer == 0 || *limit <= 0) return fail("the interpreter is not generated yet");
  interpreter_ = {static_cast<uintptr_t>(*buffer), static_cast<uintptr_t>(*buffer + *limit)};

  std::optional<uintptr_t> call_stub_return = read_pointer(l.call_stub_return_address);
  if (!call_stub_return || *call_stub_return == 0) return fail("the call stub is not generated yet");
  call_stub_return_ = *call_stub_return;

  // Blob names are string literals in libjvm: the object holding CodeCache::_heaps.
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* context) {
        CodeCache* cache = static_cast<CodeCache*>(context);
        AddressRange found[kMaxSegments];
        int count = 0;
        bool holds_vm = false;
        for (int i = 0; i < object->dlpi_phnum && count < kMaxSegments; i++) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_R)) continue;
          uintptr_t begin = object->dlpi_addr + segment.p_vaddr;
          found[count++] = {begin, begin + segment.p_memsz};
          holds_vm = holds_vm || found[count - 1].contains(cache->layout_.code_heaps, sizeof(uintptr_t));
        }
        if (!holds_vm) return 0;
        std::copy(found, found + count, cache->libjvm_);
        cache->libjvm_count_ = count;
        return 1;
      },
      this);
  if (libjvm_count_ == 0) return fail("libjvm's segments not found");
  return true;
}

std::optional<CodeBlobView> CodeCache::find_blob(uintptr_t pc) const {
  const VmLayout& l = layout_;
  const Heap* heap = nullptr;
  for (int i = 0; i < heap_count_ && !heap; i++) {
    if (heaps_[i].reserved.contains(pc, 1)) heap = &heaps_[i];
  }
  if (!heap) return std::nullopt;
  uintptr_t committed_end = static_cast<uintptr_t>(load(heap->object + l.heap_memory, l.space_high));
  AddressRange committed{heap->reserved.begin, committed_end};
  uintptr_t segmap_end = static_cast<uintptr_t>(load(heap->object + l.heap_segmap, l.space_high));
  if (!committed.contains(pc, 1) || segmap_end <= heap->segmap) return std::nullopt;

  size_t segment = (pc - committed.begin) >> heap->log2_segment_size;
  if (segment >= segmap_end - heap->segmap) return std::nullopt;
  // Other threads may be rewriting the map meanwhile: each entry is loaded once.
  const uint8_t* map = reinterpret_cast<const uint8_t*>(heap->segmap);
  uint8_t hop = __atomic_load_n(&map[segment], __ATOMIC_RELAXED);
  if (hop == kFreeSegment) return std::nullopt;
  for (int hops = 0; hop > 0; hops++) {
    if (hop > segment || hops == kMaxHops) return std::nullopt;
    segment -= hop;
    hop = __atomic_load_n(&map[segment], __ATOMIC_RELAXED);
  }

  uintptr_t block = committed.begin + (segment << heap->log2_segment_size);
  uint64_t segments = static_cast<uint64_t>(load(block, l.block_length));
  if (!load(block, l.block_used) || segments == 0 ||
      segments > (committed.end - block) >> heap->log2_segment_size) {
    return std::nullopt;
  }
  AddressRange block_range{block, block + (segments << heap->log2_segment_size)};
  uintptr_t blob = block + l.heap_block_size;
  if (!block_range.contains(blob, l.code_blob_size)) return std::nullopt;
  int64_t size = load(blob, l.blob_size);
  if (size < static_cast<int64_t>(l.code_blob_size) || !block_range.contains(blob, static_cast<size_t>(size))) {
    return std::nullopt;
  }

  CodeBlobView view;
  view.blob = {blob, blob + static_cast<uintptr_t>(size)};
  auto address = [&](const AddressRef& ref) {
    uintptr_t value = static_cast<uintptr_t>(load(blob, ref.field));
    return ref.base == AddressRef::Base::kBlob ? blob + value : value;
  };
  view.code = {address(l.code_begin), address(l.code_end)};
  if (view.code.begin > view.code.end || !view.blob.contains(view.code.begin, view.code.end - view.code.begin) ||
      pc < view.code.begin || pc > view.code.end) {
    return std::nullopt;
  }
  view.frame_words = static_cast<int>(load(blob, l.blob_frame_size));
  view.kind = kind_of(blob);
  if (view.kind != BlobKind::kOther && !view.blob.contains(blob, l.nmethod_size)) return std::nullopt;
  return view;
}

BlobKind CodeCache::kind_of(uintptr_t blob) const {
  const VmLayout& l = layout_;
  uintptr_t name = static_cast<uintptr_t>(load(blob, l.blob_name));
  // The names nmethod's constructors give (the same in JDK 17 and 25).
  bool native = name_is(name, "native nmethod");
  bool nmethod = l.blob_kind ? load(blob, *l.blob_kind) == l.kind_nmethod : native || name_is(name, "nmethod");
  if (!nmethod) return BlobKind::kOther;
  return native ? BlobKind::kNativeWrapper : BlobKind::kNmethod;
}

bool CodeCache::name_is(uintptr_t name, const char* expected) const {
  size_t size = std::strlen(expected) + 1;
  for (int i = 0; i < libjvm_count_; i++) {
    if (libjvm_[i].contains(name, size)) return std::memcmp(reinterpret_cast<const void*>(name), expected, size) == 0;
  }
  return false;
}

}  // namespace nmprof::hotspot
