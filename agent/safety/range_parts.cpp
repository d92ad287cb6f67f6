#include "agent/safety/range_parts.h"

namespace nmprof {

size_t range_parts(unsigned first, unsigned last, std::span<const unsigned> excluded, RangePart* out) {
  size_t count = 0;
  // The next part starts at `from`; each pass takes out the lowest excluded number
  // at or above it (few numbers: no sorting needed).
  for (unsigned from = first;;) {
    bool found = false;
    unsigned next = 0;
    for (unsigned n : excluded)
      if (n >= from && n <= last && (!found || n < next)) found = true, next = n;
    if (!found) {
      out[count++] = {from, last};
      return count;
    }
    if (next > from) out[count++] = {from, next - 1};
    if (next == last) return count;
    from = next + 1;
  }
}

}  // namespace nmprof
