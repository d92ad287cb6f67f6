// Names PHP frames: "Class::method", "function", "{closure}", "{main}" or how a file
// was entered ("require_once"), as methods of a class named after their file
// ("[internal function]" for the engine's and extensions' functions), with the line
// each frame was at. Read from the engine's structures when a new stack is recorded,
// on the sampled path, while the frames are still running. Other frames go to
// `native`.
#pragma once

#include "agent/stacks/frame_resolver.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof::php {

class PhpFrameResolver : public FrameResolver {
 public:
  explicit PhpFrameResolver(FrameResolver& native) : native_(native) {}
  void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) override;
  // PHP frames have no module: their line comes with the frame.
  uint32_t link_offset(const CallFrame& frame) override;
  void take_new_modules(std::vector<const Module*>& out) override {
    native_.take_new_modules(out);
  }
  void forget_modules() override { native_.forget_modules(); }
  bool named_when_sampled(const CallFrame& frame) const override { return frame.type == jfr::schema::kPhp; }

 private:
  FrameResolver& native_;
};

}  // namespace nmprof::php
