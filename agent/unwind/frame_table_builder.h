// Compiles a loaded module's .eh_frame into a FrameTable. FDEs are found through the
// search table of .eh_frame_hdr (the PT_GNU_EH_FRAME segment), as libgcc finds them,
// and read in place from the module's memory. Bad data costs rows, never a crash:
// every read stays inside the module's readable segments.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "agent/unwind/frame_table.h"

namespace nmprof::unwind {

struct MemoryRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

struct FrameTableBuild {
  FrameTable table;
  const char* error = nullptr;  // why the module got no rows at all
  size_t fdes = 0;              // FDEs listed in the search table
  size_t rejected_fdes = 0;     // left out as malformed or unsupported: their pcs have no rows
};

// `module` as dl_iterate_phdr reports it.
FrameTableBuild build_frame_table(const dl_phdr_info& module);

// The same from explicit memory: .eh_frame_hdr in `eh_frame_hdr`, and everything read
// (the header, .eh_frame) inside one of `readable`.
FrameTableBuild build_frame_table(MemoryRange eh_frame_hdr, std::span<const MemoryRange> readable,
                                  uintptr_t load_bias);

}  // namespace nmprof::unwind
