// The unwind rules of one loaded module, compiled from its .eh_frame into rows
// sorted by pc (see frame_table_builder.h). Immutable once built, so any number of
// threads may look up concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "agent/unwind/frame_row.h"

namespace nmprof::unwind {

class FrameTable {
 public:
  FrameTable() = default;  // a module without unwind information
  FrameTable(uintptr_t load_bias, std::vector<FrameRow> rows);

  // The usable rule for a run-time pc, or nullptr (no unwind information there, or
  // none the walker can follow). O(log rows).
  const FrameRow* find(uintptr_t pc) const;

  uintptr_t load_bias() const { return load_bias_; }
  std::span<const FrameRow> rows() const { return rows_; }
  size_t memory_bytes() const { return rows_.capacity() * sizeof(FrameRow); }

 private:
  uintptr_t load_bias_ = 0;
  std::vector<FrameRow> rows_;  // ascending pc; the last one is kNone
};

}  // namespace nmprof::unwind
