// Turns the raw frames of a newly recorded stack into methods of the JFR pools.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/stacks/call_stack.h"
#include "agent/stacks/modules.h"
#include "agent/writing/jfr_pools.h"

namespace nmprof {

class FrameResolver {
 public:
  virtual ~FrameResolver() = default;
  // Called by the writer (the agent's thread, the JVM's flusher, or a thread whose
  // process is ending), under the recorder's write lock: may allocate and read
  // files, but must not take a lock that a thread can hold while it allocates (no
  // dladdr, dlsym, JVMTI), since it may run in a signal handler.
  virtual void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) = 0;
  // Native frames: the return address as a link-time address in its module (the
  // JFR frame's bytecodeIndex), so that reports can look up file and line; 0 unknown.
  virtual uint32_t link_offset(const CallFrame& frame) {
    (void)frame;
    return 0;
  }
  // Modules link_offset met first since the last call: each file gets an
  // nmprof.Module event per module. forget_modules() starts a new file.
  virtual void take_new_modules(std::vector<const Module*>& out) { (void)out; }
  virtual void forget_modules() {}
  // Frames that point at structures their runtime may free before the writer runs
  // (PHP's functions, at a request's end): named on the sampled path, by the thread
  // that saw them alive, with the same locks as the writer.
  virtual bool named_when_sampled(const CallFrame& frame) const {
    (void)frame;
    return false;
  }
};

}  // namespace nmprof
