// Which functions were inlined at an address of a module, from its DWARF. Each
// compilation unit's functions and inlined subroutines are indexed by the code they
// cover when the unit is first asked about (one walk of its DIEs); an address then
// costs a scan of its unit's ranges, where dwarf_getscopes walks the unit's DIEs
// for every address (seconds for a few hundred addresses of a large C++ program).
#pragma once

#include <elfutils/libdw.h>

#include <unordered_map>
#include <vector>

namespace nmprof::profile {

class InlinedFunctions {
 public:
  // The DW_TAG_inlined_subroutine DIEs whose code contains `address` (an address of
  // `unit`'s DWARF), innermost first, up to the function they were inlined into.
  std::vector<Dwarf_Die> at(Dwarf_Die* unit, Dwarf_Addr address);

 private:
  struct Scope {
    Dwarf_Addr low, high;  // [low, high)
    Dwarf_Off die;         // in the unit's file
    int depth;             // in the unit's tree of DIEs: an inner scope is deeper
    bool inlined;          // an inlined subroutine, else a function
  };
  std::unordered_map<Dwarf_Off, std::vector<Scope>> units_;  // by the unit's DIE offset
};

}  // namespace nmprof::profile
