// The natives of io.nmprof.Context (nmprof-api.jar), exported (entry/exports.map) so that
// the JVM finds them among its agent libraries: the Java side then writes the
// thread's nmprof.h context block directly, through a direct buffer. Classes loaded
// before an attach get them registered instead (below).
#include "agent/entry/context_natives.h"

#include <cstring>

#include "agent/java/jni_exception.h"
#include "agent/threads/thread_context.h"
#include "agent/threads/thread_state.h"

extern "C" {
JNIEXPORT jint JNICALL Java_io_nmprof_Context_abi0(JNIEnv*, jclass);
JNIEXPORT jobject JNICALL Java_io_nmprof_Context_block0(JNIEnv* env, jclass);
JNIEXPORT jint JNICALL Java_io_nmprof_Context_attributeIndex0(JNIEnv* env, jclass, jstring name);
}

namespace nmprof {
namespace {

// The JVM looks natives up among its agent libraries, but adds an attached agent to
// them only once Agent_OnAttach has returned: a thread that sees the flag before
// would fail to link them (UnsatisfiedLinkError, and the thread ends). Registered,
// they are bound before the flag is set.
bool register_natives(JNIEnv* env, jclass context) {
  JNINativeMethod natives[] = {
      {const_cast<char*>("abi0"), const_cast<char*>("()I"), reinterpret_cast<void*>(Java_io_nmprof_Context_abi0)},
      {const_cast<char*>("block0"), const_cast<char*>("()Ljava/nio/ByteBuffer;"),
       reinterpret_cast<void*>(Java_io_nmprof_Context_block0)},
      {const_cast<char*>("attributeIndex0"), const_cast<char*>("(Ljava/lang/String;)I"),
       reinterpret_cast<void*>(Java_io_nmprof_Context_attributeIndex0)},
  };
  return env->RegisterNatives(context, natives, sizeof natives / sizeof natives[0]) == JNI_OK && !jni_threw(env);
}

}  // namespace

// Each copy of the class (one per class loader that loaded it) found the agent
// missing when it was initialized: its natives are bound and its static "agent"
// flag is set now.
void tell_loaded_context_classes(jvmtiEnv* jvmti, JNIEnv* env) {
  jint count = 0;
  jclass* classes = nullptr;
  if (jvmti->GetLoadedClasses(&count, &classes) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < count; i++) {
    char* signature = nullptr;
    if (jvmti->GetClassSignature(classes[i], &signature, nullptr) == JVMTI_ERROR_NONE &&
        strcmp(signature, "Lio/nmprof/Context;") == 0) {
      jfieldID agent = env->GetStaticFieldID(classes[i], "agent", "Z");
      if (!jni_threw(env) && agent && register_natives(env, classes[i]))
        env->SetStaticBooleanField(classes[i], agent, JNI_TRUE);
    }
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(signature));
    env->DeleteLocalRef(classes[i]);
  }
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(classes));
}

}  // namespace nmprof

extern "C" {

JNIEXPORT jint JNICALL Java_io_nmprof_Context_abi0(JNIEnv*, jclass) { return NMPROF_CONTEXT_ABI; }

JNIEXPORT jobject JNICALL Java_io_nmprof_Context_block0(JNIEnv* env, jclass) {
  nmprof::AgentGuard guard;
  nmprof_context_block* block = nmprof::context_of_this_thread();
  return block ? env->NewDirectByteBuffer(block, sizeof *block) : nullptr;
}

JNIEXPORT jint JNICALL Java_io_nmprof_Context_attributeIndex0(JNIEnv* env, jclass, jstring name) {
  nmprof::AgentGuard guard;
  const char* utf = name ? env->GetStringUTFChars(name, nullptr) : nullptr;
  if (!utf) return -1;
  int index = nmprof::declared_attribute_index(utf);
  env->ReleaseStringUTFChars(name, utf);
  return index;
}

}  // extern "C"
