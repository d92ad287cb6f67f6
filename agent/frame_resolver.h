// Turns the raw frames of a newly recorded stack into methods of the JFR pools.
#pragma once

#include <cstdint>

#include "agent/call_stack.h"
#include "agent/jfr_pools.h"

namespace nmprof {

class FrameResolver {
 public:
  virtual ~FrameResolver() = default;
  // Called under the recorder lock, on the sampled path: may allocate and read files,
  // but must not take a lock that a thread can hold while it allocates (no dladdr,
  // dlsym, JVMTI).
  virtual void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) = 0;
};

}  // namespace nmprof
