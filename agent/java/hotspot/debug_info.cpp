#include "agent/java/hotspot/debug_info.h"

namespace nmprof::hotspot {
namespace {

// The UNSIGNED5 constants: bytes below kLow end a number, the others carry 6 bits each.
constexpr uint32_t kLow = 192;
constexpr int kMaxBytes = 5;
// Far beyond any inlining depth HotSpot allows.
constexpr int kMaxVirtualFrames = 1024;
// PcDesc::upper_offset_limit: pc offsets are below this.
constexpr int64_t kMaxPcOffset = 0x7fffffff;

}  // namespace

size_t decode_debug_int(const uint8_t* bytes, size_t available, bool exclude_zero, uint32_t* value) {
  const uint32_t excluded = exclude_zero ? 1 : 0;
  uint32_t sum = 0;
  for (size_t i = 0; i < kMaxBytes; i++) {
    if (i == available || bytes[i] < excluded) return 0;
    sum += (bytes[i] - excluded) << (6 * i);
    if (bytes[i] < kLow || i == kMaxBytes - 1) {
      *value = sum;
      return i + 1;
    }
  }
  return 0;
}

bool NmethodDebugInfo::open(const VmLayout& layout, const CodeBlobView& nmethod) {
  layout_ = &layout;
  const void* header = reinterpret_cast<const void*>(nmethod.blob.begin);
  AddressRange object = nmethod.blob;
  bool mapped = true;
  if (layout.immutable_data) {
    uintptr_t data = layout.immutable_data->address_in(header);
    int64_t size = layout.immutable_data_size->value_in(header);
    if (data == 0 || size <= 0 || data + static_cast<uint64_t>(size) < data) return false;
    object = {data, data + static_cast<uint64_t>(size)};
    mapped = false;
  }
  auto address = [&](const AddressRef& ref) {
    uintptr_t value = ref.field.address_in(header);
    switch (ref.base) {
      case AddressRef::Base::kBlob: return nmethod.blob.begin + value;
      case AddressRef::Base::kImmutableData: return object.begin + value;
      default: return value;
    }
  };
  pcs_ = {address(layout.pcs_begin), address(layout.pcs_end)};
  scopes_ = {address(layout.scopes_begin), address(layout.scopes_end)};
  code_begin_ = nmethod.code.begin;
  if (pcs_.begin > pcs_.end || scopes_.begin > scopes_.end || !object.contains(pcs_.begin, pcs_.end - pcs_.begin) ||
      !object.contains(scopes_.begin, scopes_.end - scopes_.begin) ||
      (pcs_.end - pcs_.begin) % layout.pc_desc_size != 0) {
    return false;
  }
  bytes_.emplace(object, mapped);
  return true;
}

std::optional<int64_t> NmethodDebugInfo::field(uintptr_t object, FieldRef f) {
  unsigned char bytes[8];
  if (!bytes_->read(object + f.offset, bytes, f.size)) return std::nullopt;
  f.offset = 0;
  return f.value_in(bytes);
}

std::optional<int> NmethodDebugInfo::scope_at(uintptr_t pc, bool approximate) {
  if (pc < code_begin_ || pc - code_begin_ >= kMaxPcOffset) return std::nullopt;
  const int64_t target = static_cast<int64_t>(pc - code_begin_);
  const uint64_t size = layout_->pc_desc_size;
  const uint64_t count = (pcs_.end - pcs_.begin) / size;
  if (count < 2) return std::nullopt;  // not even the sentinels
  // The first PcDesc at or after `target`, past the leading sentinel.
  uint64_t low = 1;
  uint64_t high = count;
  while (low < high) {
    uint64_t middle = low + (high - low) / 2;
    std::optional<int64_t> offset = field(pcs_.begin + middle * size, layout_->pc_offset);
    if (!offset) return std::nullopt;
    if (*offset < target) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low == count) return std::nullopt;
  uintptr_t found = pcs_.begin + low * size;
  if (!approximate) {
    std::optional<int64_t> offset = field(found, layout_->pc_offset);
    if (!offset || *offset != target) return std::nullopt;
  }
  std::optional<int64_t> scope = field(found, layout_->scope_decode_offset);
  if (!scope) return std::nullopt;
  return static_cast<int>(*scope);
}

int NmethodDebugInfo::virtual_frames(int decode_offset) {
  const int64_t scopes_size = static_cast<int64_t>(scopes_.end - scopes_.begin);
  if (decode_offset <= 0 || decode_offset >= scopes_size) return 1;
  int frames = 1;
  for (int64_t offset = decode_offset;;) {
    uint8_t bytes[kMaxBytes];
    size_t available = bytes_->read_some(scopes_.begin + static_cast<uintptr_t>(offset), bytes, sizeof bytes);
    uint32_t sender;
    if (!decode_debug_int(bytes, available, layout_->debug_ints_exclude_zero, &sender)) return 0;
    if (sender == 0) return frames;
    frames++;
    // Out of range: vframeStream stops with a frame for the compiled method.
    if (sender >= scopes_size) return frames;
    // A caller's scope is recorded before its callees'.
    if (sender >= offset || frames > kMaxVirtualFrames) return 0;
    offset = sender;
  }
}

}  // namespace nmprof::hotspot
