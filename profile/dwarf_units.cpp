#include "profile/dwarf_units.h"

namespace nmprof::profile {

std::optional<Dwarf_Die> DwarfUnits::at(Dwarf_Addr address) {
  Dwarf_Die unit;
  if (dwarf_addrdie(dwarf_, address, &unit)) return unit;
  if (!ranges_) {
    ranges_.emplace();
    Dwarf_Off offset = 0, next = 0;
    size_t header_size = 0;
    while (dwarf_nextcu(dwarf_, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die die;
      if (dwarf_offdie(dwarf_, offset + header_size, &die)) {
        Dwarf_Addr base, low, high;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&die, at, &base, &low, &high)) > 0;)
          ranges_->push_back({low, high, offset + header_size});
      }
      offset = next;
    }
  }
  for (const Range& range : *ranges_)
    if (address >= range.low && address < range.high && dwarf_offdie(dwarf_, range.unit, &unit)) return unit;
  return std::nullopt;
}

}  // namespace nmprof::profile
