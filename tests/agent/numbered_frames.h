// A frame resolver for recorder tests: names every native frame after its id.
#pragma once

#include <cstdint>
#include <string>

#include "agent/stacks/frame_resolver.h"

namespace nmprof {

class NumberedFrames : public FrameResolver {
 public:
  void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) override {
    method = pools.method(pools.klass("test"), "f" + std::to_string(frame.id), "()V", 0);
    line = -1;
  }
};

}  // namespace nmprof
