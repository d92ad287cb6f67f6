// AsyncGetCallTrace, HotSpot's unofficial stack sampling entry point (exported by
// libjvm, declared in no JDK header): the structures it fills and a way to call it
// with registers the agent already has.
#pragma once

#include <string>

#include "agent/java/jni/jni.h"
#include "agent/unwind/registers.h"

namespace nmprof::hotspot {

// The layouts HotSpot's forte.cpp defines.
struct ASGCT_CallFrame {
  jint lineno;  // the bytecode index; kNativeMethodBci for native methods
  jmethodID method_id;
};

struct ASGCT_CallTrace {
  JNIEnv* env_id;
  jint num_frames;  // frames filled, or a negative reason for none
  ASGCT_CallFrame* frames;
};

// What AsyncGetCallTrace gives a native method's frame instead of a bytecode index.
constexpr jint kNativeMethodBci = -3;

class AsyncGetCallTrace {
 public:
  // Finds the function in the loaded libjvm. Note that it returns frames only while
  // the agent has JVMTI ClassLoad events enabled (and jmethodIDs only for methods
  // whose ids exist, e.g. made by GetClassMethods at ClassPrepare).
  bool init(std::string* why_not);

  // Fills `frames` (innermost first) for the calling thread, whose JNIEnv is `env`,
  // with a signal context holding `registers`. Returns the frame count, or
  // AsyncGetCallTrace's negative code (0: no Java frames). Lock- and allocation-free.
  int call(JNIEnv* env, const unwind::Registers& registers, ASGCT_CallFrame* frames, int depth) const;

 private:
  using Function = void (*)(ASGCT_CallTrace* trace, jint depth, void* ucontext);
  Function function_ = nullptr;
};

}  // namespace nmprof::hotspot
