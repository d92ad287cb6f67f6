// Fuzzes the .eh_frame compiler: the input is a module's readable memory starting at
// its .eh_frame_hdr (the search table, then the CIEs and FDEs it points to), and
// the table built from it is looked up at every row.
#include <cstddef>
#include <cstdint>
#include <span>

#include "agent/unwind/frame_table_builder.h"

namespace {

using namespace nmprof::unwind;

// Code lies below .eh_frame_hdr in a loaded module; seeds cut from real libraries
// keep their pc-relative distances, so the module is taken to start this far below.
constexpr uintptr_t kCodeBelowHeader = uintptr_t{1} << 24;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto begin = reinterpret_cast<uintptr_t>(data);
  MemoryRange memory{begin, begin + size};
  FrameTableBuild build = build_frame_table(memory, std::span(&memory, 1), begin - kCodeBelowHeader);
  for (const FrameRow& row : build.table.rows()) {
    build.table.find(build.table.load_bias() + row.pc);
    build.table.find(build.table.load_bias() + row.pc - 1);
  }
  return 0;
}
