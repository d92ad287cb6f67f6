// Compiled against the JDK's jni.h and jvmti.h only (CMakeLists.txt).
#include "tests/hotspot/jdk_layout.h"

#include <jvmti.h>

#include <cstring>

#define JNI_INDEX(function) offsetof(JNINativeInterface_, function) / sizeof(void*)
#define JVMTI_NUMBER(function) offsetof(jvmtiInterface_1_, function) / sizeof(void*) + 1
#define JAVA_VM_GET_ENV offsetof(JNIInvokeInterface_, GetEnv) / sizeof(void*)

JniLayout jdk_layout() {
#include "tests/hotspot/jni_layout.inc"
}
