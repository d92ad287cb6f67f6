// Tells the type of each Java frame of a stack that AsyncGetCallTrace returned for
// the calling thread while it runs native or VM code (a JNI method, or the VM
// called from one): interpreted, JIT compiled (C1 or C2), inlined into the
// compiled frame below it, or native. AsyncGetCallTrace does not say; a physical
// walk of the same frames (java_stack.h) does, and its virtual frames must agree
// with AsyncGetCallTrace's one for one, or the sample gets no types at all.
#pragma once

#include <cstdint>
#include <string>

#include "agent/java/hotspot/asgct.h"
#include "agent/java/hotspot/code_cache.h"
#include "agent/java/hotspot/java_stack.h"
#include "agent/java/hotspot/vm_layout.h"
#include "agent/java/jni/jni.h"

namespace nmprof::hotspot {

class HotSpotFrames {
 public:
  HotSpotFrames() = default;
  HotSpotFrames(const HotSpotFrames&) = delete;
  HotSpotFrames& operator=(const HotSpotFrames&) = delete;

  // Once, before any classify(), on a thread attached to the running VM (the
  // JVMTI VMInit callback or Agent_OnAttach), whose JNIEnv is `env`: reads
  // VMStructs and the code cache's layout, and learns where a JNIEnv lies in its
  // JavaThread. False, with a one-line reason, if this VM lacks anything needed;
  // classify() then always returns false.
  bool init(JNIEnv* env, std::string* why_not);
  bool ready() const { return ready_; }

  // Writes a jfr::schema::FrameTypeKey for each of the `count` frames that
  // AsyncGetCallTrace returned for the calling thread when asked for up to
  // `depth`: kInterpreted, kJitCompiled, kC1Compiled, kInlined or kNative. `env`
  // is the thread's JNIEnv. False if the thread is not in native or VM code, its
  // frames cannot be walked safely, or they disagree with `frames`; types_out is
  // then unspecified. No lock, no allocation, no JVMTI: safe in a malloc hook.
  bool classify(JNIEnv* env, const ASGCT_CallFrame* frames, int count, int depth, uint8_t* types_out) const;

 private:
  VmLayout layout_;
  CodeCache code_{layout_};
  JavaStack stack_{layout_, code_};
  uintptr_t env_offset_ = 0;  // of the JNIEnv in its JavaThread
  bool ready_ = false;
};

}  // namespace nmprof::hotspot
