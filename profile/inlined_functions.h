// Which functions were inlined at an address of a module, from its DWARF, without
// walking a whole compilation unit for every address as dwarf_getscopes does (a
// second of CPU for a few hundred addresses of a large C++ program). A unit's
// functions are listed by the code they cover when the unit is first asked about
// (its top-level DIEs and namespaces: a class's member functions have their code in
// a DIE outside the class, DW_AT_specification); a function's inlined subroutines
// when it is first asked about.
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
    int depth;             // in the function's tree of DIEs: an inner scope is deeper
  };
  std::unordered_map<Dwarf_Off, std::vector<Scope>> functions_;  // by unit: its functions (depth 0)
  std::unordered_map<Dwarf_Off, std::vector<Scope>> inlined_;    // by function: its inlined subroutines
};

}  // namespace nmprof::profile
