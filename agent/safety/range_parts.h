// The parts of a range of descriptor numbers left once some numbers are taken out:
// a program's close_range(3, ~0U) split around the agent's descriptors in it.
#pragma once

#include <cstddef>
#include <span>

namespace nmprof {

struct RangePart {
  unsigned first, last;
};

// The parts of [first, last] (first <= last) that hold none of `excluded` (any
// order, repeats allowed, numbers outside the range ignored), ascending, written to
// `out`, which has room for excluded.size() + 1; returns how many.
size_t range_parts(unsigned first, unsigned last, std::span<const unsigned> excluded, RangePart* out);

}  // namespace nmprof
