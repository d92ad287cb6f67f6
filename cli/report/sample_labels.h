// The hook for labels in outputs that have them (pprof): how the samples of one
// stack are told apart (a group per allocation, e.g. by span or by context
// attributes) and which labels each group carries. Without one, each stack is one
// group with no labels of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/pprof/pprof_profile.h"
#include "formats/profile/profile.h"

namespace nmprof::report {

class SampleLabels {
 public:
  virtual ~SampleLabels() = default;
  // Allocations of one stack in different groups become different samples.
  virtual uint32_t group(const profile::Allocation& allocation) = 0;
  virtual std::vector<pprof::Label> labels(uint32_t group) const = 0;
};

}  // namespace nmprof::report
