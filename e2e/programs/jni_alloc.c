// The JNI library of NativeMemoryApp and AttachTarget: mallocs at a known function.
#include <jni.h>
#include <stdlib.h>

__attribute__((noinline)) void jni_site(size_t size) {
  void* p = malloc(size);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
}

JNIEXPORT void JNICALL Java_NativeMemoryApp_jniAllocate(JNIEnv* env, jclass klass, jint count, jint size) {
  (void)env;
  (void)klass;
  for (jint i = 0; i < count; i++) jni_site((size_t)size);
}

JNIEXPORT void JNICALL Java_AttachTarget_jniAllocate(JNIEnv* env, jclass klass, jint count, jint size) {
  (void)env;
  (void)klass;
  for (jint i = 0; i < count; i++) jni_site((size_t)size);
}
