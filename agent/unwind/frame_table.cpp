#include "agent/unwind/frame_table.h"

#include <algorithm>
#include <limits>

namespace nmprof::unwind {

FrameTable::FrameTable(uintptr_t load_bias, std::vector<FrameRow> rows)
    : load_bias_(load_bias), rows_(std::move(rows)) {}

const FrameRow* FrameTable::find(uintptr_t pc) const {
  uintptr_t offset = pc - load_bias_;  // wraps to a huge value below the module
  if (offset > std::numeric_limits<uint32_t>::max()) return nullptr;
  auto after = std::upper_bound(rows_.begin(), rows_.end(), static_cast<uint32_t>(offset),
                                [](uint32_t value, const FrameRow& row) { return value < row.pc; });
  if (after == rows_.begin()) return nullptr;
  const FrameRow& row = *(after - 1);
  return row.base() == CfaBase::kNone ? nullptr : &row;
}

}  // namespace nmprof::unwind
