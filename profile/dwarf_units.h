// The compilation unit whose code covers an address of a module's DWARF: found
// through .debug_aranges by libdw, else through the units' own ranges, listed once.
// Clang writes no .debug_aranges (unless -gdwarf-aranges), and libdw (0.188) then
// finds no unit: programs built with clang got no source lines.
#pragma once

#include <elfutils/libdw.h>

#include <optional>
#include <vector>

namespace nmprof::profile {

class DwarfUnits {
 public:
  explicit DwarfUnits(Dwarf* dwarf) : dwarf_(dwarf) {}
  // The unit's DIE, or nothing.
  std::optional<Dwarf_Die> at(Dwarf_Addr address);

 private:
  struct Range {
    Dwarf_Addr low, high;  // [low, high)
    Dwarf_Off unit;        // its DIE's offset
  };
  Dwarf* dwarf_;
  std::optional<std::vector<Range>> ranges_;  // listed on the first address aranges do not cover
};

}  // namespace nmprof::profile
