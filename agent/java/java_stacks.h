// The Java part of a sampled stack. Where the native walk reached code of no known
// module (the JVM's code cache), AsyncGetCallTrace gives the Java frames from the
// thread's last Java frame on, and HotSpot's own structures tell their types. Runs
// on the sampled path: no lock, no allocation, no JVMTI call.
#pragma once

#include <string>

#include "agent/java/hotspot/asgct.h"
#include "agent/java/hotspot/hotspot_frames.h"
#include "agent/java/jni/jni.h"
#include "agent/stacks/call_stack.h"
#include "agent/stacks/stack_capture.h"
#include "agent/stacks/thread_scratch.h"
#include "agent/threads/thread_state.h"

namespace nmprof {

class JavaStacks {
 public:
  // On a thread attached to the VM (VMInit, Agent_OnAttach). False when Java frames
  // cannot be had at all; frame types may still be missing (why_not_typed says why).
  bool init(JavaVM* vm, JNIEnv* env, std::string* why_not, std::string* why_not_typed);
  void append(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch);

 private:
  JNIEnv* env_of(ThreadState& t);

  JavaVM* vm_ = nullptr;
  hotspot::AsyncGetCallTrace call_trace_;
  hotspot::HotSpotFrames frame_types_;
};

}  // namespace nmprof
