#include "formats/profile/inlined_functions.h"

#include <dwarf.h>

#include <algorithm>

namespace nmprof::profile {
namespace {

template <typename Scope>
void index_children(Dwarf_Die* parent, int depth, std::vector<Scope>& scopes) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      Dwarf_Addr base, low, high;
      for (ptrdiff_t at = 0; (at = dwarf_ranges(&child, at, &base, &low, &high)) > 0;)
        scopes.push_back({low, high, dwarf_dieoffset(&child), depth, tag == DW_TAG_inlined_subroutine});
    }
    if (dwarf_haschildren(&child)) index_children(&child, depth + 1, scopes);
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

std::vector<Dwarf_Die> InlinedFunctions::at(Dwarf_Die* unit, Dwarf_Addr address) {
  auto [it, added] = units_.try_emplace(dwarf_dieoffset(unit));
  if (added) index_children(unit, 0, it->second);
  std::vector<const Scope*> containing;
  for (const Scope& scope : it->second)
    if (address >= scope.low && address < scope.high) containing.push_back(&scope);
  // Scopes that contain one address nest: the deepest is the innermost.
  std::sort(containing.begin(), containing.end(), [](const Scope* a, const Scope* b) { return a->depth > b->depth; });
  std::vector<Dwarf_Die> inlined;
  Dwarf* file = dwarf_cu_getdwarf(unit->cu);
  for (const Scope* scope : containing) {
    Dwarf_Die die;
    if (!scope->inlined || !dwarf_offdie(file, scope->die, &die)) break;
    inlined.push_back(die);
  }
  return inlined;
}

}  // namespace nmprof::profile
