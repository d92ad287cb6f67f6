// What binutils' readelf says about a file's unwind rows (readelf --debug-dump=
// frames-interp) and sections: an independent oracle for FrameTable's contents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nmprof::unwind::test {

// One row as readelf prints it; registers the FDE never mentions are "".
struct ReadelfRow {
  uint64_t pc = 0;  // ELF virtual address
  std::string cfa;  // "rsp+8", "rbp+16", "exp", ...
  std::string rbp;  // "c-16", "u" (undefined or not yet saved), "s", "exp", ...
  std::string rsp;
  std::string ra;
};

struct ReadelfFde {
  uint64_t pc_begin = 0;
  uint64_t pc_end = 0;
  std::vector<ReadelfRow> rows;  // an FDE without instructions gets its CIE's row
};

// The FDEs of .eh_frame (not .debug_frame); empty if readelf fails.
std::vector<ReadelfFde> readelf_eh_frame(const std::string& path);

struct ElfSection {
  uint64_t address = 0;
  uint64_t size = 0;
};
std::optional<ElfSection> readelf_section(const std::string& path, const std::string& name);

}  // namespace nmprof::unwind::test
