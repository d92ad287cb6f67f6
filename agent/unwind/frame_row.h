// One row of a FrameTable: how to find the caller's frame for the pcs from `pc` up
// to the next row, in the few forms x86-64 code uses. Kept to 8 bytes because a large
// module has hundreds of thousands of rows.
#pragma once

#include <cstdint>

namespace nmprof::unwind {

enum class CfaBase : uint32_t {
  kNone,       // no usable rule here: the walker falls back to the frame-pointer chain
  kRsp,        // CFA = rsp + cfa_offset
  kRbp,        // CFA = rbp + cfa_offset
  kOutermost,  // the return address is undefined: the stack ends in this frame
};

struct FrameRow {
  static constexpr uint32_t kMaxCfaOffset = (1u << 22) - 1;
  // rbp_slot: the caller's rbp is at CFA + 8 * rbp_slot, except these two values.
  static constexpr int kRbpUnchanged = 0;
  static constexpr int kRbpUnknown = -128;
  static constexpr int kMinRbpSlot = -127;
  static constexpr int kMaxRbpSlot = 127;

  uint32_t pc;  // offset from the module's load bias
  uint32_t cfa_offset : 22;
  uint32_t cfa_base : 2;  // CfaBase
  int32_t rbp_slot : 8;
  // Always CFA - 8 (the return address), or the row is kNone.

  CfaBase base() const { return static_cast<CfaBase>(cfa_base); }
  bool same_rule(const FrameRow& other) const {
    return cfa_offset == other.cfa_offset && cfa_base == other.cfa_base && rbp_slot == other.rbp_slot;
  }
};
static_assert(sizeof(FrameRow) == 8);

}  // namespace nmprof::unwind
