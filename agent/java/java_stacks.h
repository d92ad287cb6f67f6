// The Java part of a sampled stack. Where the native walk reached code of no known
// module (the JVM's code cache), AsyncGetCallTrace gives the Java frames from the
// thread's last Java frame on, and HotSpot's own structures tell their types. Runs
// on the sampled path: no lock, no allocation, no JVMTI call.
#pragma once

#include <jni.h>

#include <atomic>
#include <string>

#include "agent/stacks/call_stack.h"
#include "agent/java/hotspot/asgct.h"
#include "agent/java/hotspot/hotspot_frames.h"
#include "agent/stacks/stack_capture.h"
#include "agent/stacks/thread_scratch.h"
#include "agent/hooks/thread_state.h"

namespace nmprof {

class JavaStacks {
 public:
  // On a thread attached to the VM (VMInit, Agent_OnAttach). False when Java frames
  // cannot be had at all; frame types may still be missing (why_not_typed says why).
  bool init(JavaVM* vm, JNIEnv* env, std::string* why_not, std::string* why_not_typed);
  void append(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch);

  // Samples whose Java frames could not be typed (labelled JIT compiled).
  uint64_t untyped_samples() const { return untyped_.load(std::memory_order_relaxed); }

 private:
  JNIEnv* env_of(ThreadState& t);

  JavaVM* vm_ = nullptr;
  hotspot::AsyncGetCallTrace call_trace_;
  hotspot::HotSpotFrames frame_types_;
  std::atomic<uint64_t> untyped_{0};
};

}  // namespace nmprof
