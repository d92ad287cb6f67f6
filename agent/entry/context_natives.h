// io.nmprof.Context (nmprof-api.jar) and the agent: its natives (context_natives.cpp)
// and, when the agent is attached to a JVM that already loaded the class, the flag
// that tells the class the agent is there now.
#pragma once

#include "agent/java/jni/jni.h"
#include "agent/java/jni/jvmti.h"

namespace nmprof {

void tell_loaded_context_classes(jvmtiEnv* jvmti, JNIEnv* env);

}  // namespace nmprof
