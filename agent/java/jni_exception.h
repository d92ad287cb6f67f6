// JNI calls that may throw (a class, method or field this JDK lacks) are each
// followed by a check before the next call: -Xcheck:jni reports a call made while a
// possible exception was left unchecked, and the agent must add nothing to the
// host's output.
#pragma once

#include "agent/java/jni/jni.h"

namespace nmprof {

// Whether the last JNI call threw; clears the exception.
inline bool jni_threw(JNIEnv* env) {
  if (!env->ExceptionCheck()) return false;
  env->ExceptionClear();
  return true;
}

}  // namespace nmprof
