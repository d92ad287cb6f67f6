#include "profile/inlined_functions.h"

#include <dwarf.h>

#include <algorithm>

namespace nmprof::profile {
namespace {

template <typename Scope>
void add_ranges(Dwarf_Die* die, int depth, std::vector<Scope>& scopes) {
  Dwarf_Addr base, low, high;
  for (ptrdiff_t at = 0; (at = dwarf_ranges(die, at, &base, &low, &high)) > 0;)
    scopes.push_back({low, high, dwarf_dieoffset(die), depth});
}

// The functions among the children of a unit or namespace, and of its namespaces.
template <typename Scope>
void list_functions(Dwarf_Die* parent, std::vector<Scope>& functions) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) add_ranges(&child, 0, functions);
    if (tag == DW_TAG_namespace) list_functions(&child, functions);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The inlined subroutines in a function, however deep (in blocks, in each other).
template <typename Scope>
void list_inlined(Dwarf_Die* parent, int depth, std::vector<Scope>& inlined) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inlined_subroutine) add_ranges(&child, depth, inlined);
    // A function nested in this one (GNU C) has code of its own, outside this one's.
    if (tag != DW_TAG_subprogram && dwarf_haschildren(&child)) list_inlined(&child, depth + 1, inlined);
  } while (dwarf_siblingof(&child, &child) == 0);
}

template <typename Scope>
const Scope* containing(const std::vector<Scope>& scopes, Dwarf_Addr address) {
  for (const Scope& scope : scopes)
    if (address >= scope.low && address < scope.high) return &scope;
  return nullptr;
}

}  // namespace

std::vector<Dwarf_Die> InlinedFunctions::at(Dwarf_Die* unit, Dwarf_Addr address) {
  Dwarf* file = dwarf_cu_getdwarf(unit->cu);
  auto [functions, new_unit] = functions_.try_emplace(dwarf_dieoffset(unit));
  if (new_unit) list_functions(unit, functions->second);
  const Scope* function = containing(functions->second, address);
  Dwarf_Die function_die;
  if (!function || !dwarf_offdie(file, function->die, &function_die)) return {};
  auto [inlined, new_function] = inlined_.try_emplace(function->die);
  if (new_function) list_inlined(&function_die, 0, inlined->second);

  std::vector<const Scope*> around;
  for (const Scope& scope : inlined->second)
    if (address >= scope.low && address < scope.high) around.push_back(&scope);
  // Scopes that contain one address nest: the deepest is the innermost.
  std::sort(around.begin(), around.end(), [](const Scope* a, const Scope* b) { return a->depth > b->depth; });
  std::vector<Dwarf_Die> dies;
  for (const Scope* scope : around) {
    Dwarf_Die die;
    if (!dwarf_offdie(file, scope->die, &die)) break;
    dies.push_back(die);
  }
  return dies;
}

}  // namespace nmprof::profile
