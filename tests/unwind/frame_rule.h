// What FrameTable::find says for a pc, flattened into one comparable value, for the
// tests that check tables against what they expect.
#pragma once

#include <cstdint>
#include <ostream>

#include "agent/unwind/frame_table.h"

namespace nmprof::unwind::test {

struct Rule {
  CfaBase base;
  uint32_t cfa_offset;
  int rbp_slot;
  bool operator==(const Rule&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, const Rule& rule) {
  return out << "{base " << int(rule.base) << ", offset " << rule.cfa_offset << ", rbp " << rule.rbp_slot << "}";
}

constexpr Rule kNoRule{CfaBase::kNone, 0, 0};
constexpr Rule kOutermost{CfaBase::kOutermost, 0, 0};

inline Rule rule_at(const FrameTable& table, uintptr_t pc) {
  const FrameRow* row = table.find(pc);
  if (row == nullptr) return kNoRule;
  if (row->base() == CfaBase::kOutermost) return kOutermost;
  return Rule{row->base(), row->cfa_offset, row->rbp_slot};
}

}  // namespace nmprof::unwind::test
