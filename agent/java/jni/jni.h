// The part of the Java Native Interface the agent uses, so that a build needs no JDK.
// Written for nmprof from the JNI specification
// (docs.oracle.com/en/java/javase/17/docs/specs/jni/), not copied from the JDK's jni.h
// (GPL v2 with the Classpath Exception): only the types, constants and functions the
// agent and its tests call. A JNIEnv and a JavaVM point to tables of function
// pointers; the specification gives each function's index in its table, which is all
// a call needs. Named as the specification names them, so that code reads as it would
// against the JDK's header; add a function by its index when the agent needs one more.
// tests/hotspot/jni_headers_test.cpp checks all of it against the JDK's headers.
#pragma once

#include <cstdint>

#define JNIEXPORT __attribute__((visibility("default")))
#define JNICALL

using jint = int32_t;
using jlong = long;  // 64 bits (x86-64 Linux is LP64)
using jboolean = uint8_t;
using jsize = jint;

// References: opaque, a class or a string being an object too.
struct JniObject {};
struct JniClass : JniObject {};
struct JniString : JniObject {};
struct JniMethod;
struct JniField;
using jobject = JniObject*;
using jclass = JniClass*;
using jstring = JniString*;
using jmethodID = JniMethod*;
using jfieldID = JniField*;

constexpr jboolean JNI_FALSE = 0;
constexpr jboolean JNI_TRUE = 1;
constexpr jint JNI_OK = 0;
constexpr jint JNI_ERR = -1;
constexpr jint JNI_VERSION_1_6 = 0x00010006;

struct JNINativeMethod {
  char* name;
  char* signature;
  void* fnPtr;
};

struct JavaVMOption {
  char* optionString;
  void* extraInfo;
};

struct JavaVMInitArgs {
  jint version;
  jint nOptions;
  JavaVMOption* options;
  jboolean ignoreUnrecognized;
};

namespace jni_table {

// An entry of a function table, cast to its function's type to be called.
using Entry = void (*)();

// Signature R(P...) or R(P..., ...) as the table's function type: R (*)(Self*, P...[, ...]).
template <typename Signature>
struct Function;
template <typename R, typename... P>
struct Function<R(P...)> {
  using Result = R;
  template <typename Self>
  using Pointer = R (*)(Self*, P...);
};
template <typename R, typename... P>
struct Function<R(P..., ...)> {
  using Result = R;
  template <typename Self>
  using Pointer = R (*)(Self*, P..., ...);
};

// Calls the function at `index` of `self`'s table, of type Signature with `self` first.
template <typename Signature, typename Self, typename... Arguments>
typename Function<Signature>::Result call(Self* self, int index, Arguments... arguments) {
  using Pointer = typename Function<Signature>::template Pointer<Self>;
  return reinterpret_cast<Pointer>(self->functions[index])(self, arguments...);
}

}  // namespace jni_table

// Indices of the functions in the table of a JNIEnv (the specification's "Interface
// Function Table").
namespace jni_index {
enum : int {
  FindClass = 6,
  ExceptionClear = 17,
  NewGlobalRef = 21,
  DeleteGlobalRef = 22,
  DeleteLocalRef = 23,
  NewObject = 28,
  GetMethodID = 33,
  CallLongMethod = 52,
  GetFieldID = 94,
  GetLongField = 101,
  GetStaticMethodID = 113,
  CallStaticObjectMethod = 114,
  CallStaticIntMethod = 129,
  CallStaticVoidMethod = 141,
  GetStaticFieldID = 144,
  SetStaticBooleanField = 155,
  NewStringUTF = 167,
  GetStringUTFChars = 169,
  ReleaseStringUTFChars = 170,
  RegisterNatives = 215,
  ExceptionCheck = 228,
  NewDirectByteBuffer = 229,
};
}  // namespace jni_index

// Indices in the table of a JavaVM (the specification's "Invocation API Functions").
namespace java_vm_index {
enum : int {
  GetEnv = 6,
};
}  // namespace java_vm_index

// A thread's JNI interface. The variadic Call*Method and NewObject take the method's
// arguments as C varargs, as the table's functions of those names do.
struct JNIEnv {
  const jni_table::Entry* functions;

  jclass FindClass(const char* name) { return call<jclass(const char*)>(jni_index::FindClass, name); }
  void ExceptionClear() { call<void()>(jni_index::ExceptionClear); }
  jobject NewGlobalRef(jobject object) { return call<jobject(jobject)>(jni_index::NewGlobalRef, object); }
  void DeleteGlobalRef(jobject object) { call<void(jobject)>(jni_index::DeleteGlobalRef, object); }
  void DeleteLocalRef(jobject object) { call<void(jobject)>(jni_index::DeleteLocalRef, object); }
  template <typename... Args>
  jobject NewObject(jclass type, jmethodID constructor, Args... args) {
    return call<jobject(jclass, jmethodID, ...)>(jni_index::NewObject, type, constructor, args...);
  }
  jmethodID GetMethodID(jclass type, const char* name, const char* signature) {
    return call<jmethodID(jclass, const char*, const char*)>(jni_index::GetMethodID, type, name, signature);
  }
  template <typename... Args>
  jlong CallLongMethod(jobject object, jmethodID method, Args... args) {
    return call<jlong(jobject, jmethodID, ...)>(jni_index::CallLongMethod, object, method, args...);
  }
  jfieldID GetFieldID(jclass type, const char* name, const char* signature) {
    return call<jfieldID(jclass, const char*, const char*)>(jni_index::GetFieldID, type, name, signature);
  }
  jlong GetLongField(jobject object, jfieldID field) {
    return call<jlong(jobject, jfieldID)>(jni_index::GetLongField, object, field);
  }
  jmethodID GetStaticMethodID(jclass type, const char* name, const char* signature) {
    return call<jmethodID(jclass, const char*, const char*)>(jni_index::GetStaticMethodID, type, name, signature);
  }
  template <typename... Args>
  jobject CallStaticObjectMethod(jclass type, jmethodID method, Args... args) {
    return call<jobject(jclass, jmethodID, ...)>(jni_index::CallStaticObjectMethod, type, method, args...);
  }
  template <typename... Args>
  jint CallStaticIntMethod(jclass type, jmethodID method, Args... args) {
    return call<jint(jclass, jmethodID, ...)>(jni_index::CallStaticIntMethod, type, method, args...);
  }
  template <typename... Args>
  void CallStaticVoidMethod(jclass type, jmethodID method, Args... args) {
    call<void(jclass, jmethodID, ...)>(jni_index::CallStaticVoidMethod, type, method, args...);
  }
  jfieldID GetStaticFieldID(jclass type, const char* name, const char* signature) {
    return call<jfieldID(jclass, const char*, const char*)>(jni_index::GetStaticFieldID, type, name, signature);
  }
  void SetStaticBooleanField(jclass type, jfieldID field, jboolean value) {
    call<void(jclass, jfieldID, jboolean)>(jni_index::SetStaticBooleanField, type, field, value);
  }
  jstring NewStringUTF(const char* text) { return call<jstring(const char*)>(jni_index::NewStringUTF, text); }
  const char* GetStringUTFChars(jstring string, jboolean* is_copy) {
    return call<const char*(jstring, jboolean*)>(jni_index::GetStringUTFChars, string, is_copy);
  }
  void ReleaseStringUTFChars(jstring string, const char* chars) {
    call<void(jstring, const char*)>(jni_index::ReleaseStringUTFChars, string, chars);
  }
  jint RegisterNatives(jclass type, const JNINativeMethod* methods, jint count) {
    return call<jint(jclass, const JNINativeMethod*, jint)>(jni_index::RegisterNatives, type, methods, count);
  }
  jboolean ExceptionCheck() { return call<jboolean()>(jni_index::ExceptionCheck); }
  jobject NewDirectByteBuffer(void* address, jlong capacity) {
    return call<jobject(void*, jlong)>(jni_index::NewDirectByteBuffer, address, capacity);
  }

 private:
  // The function at `index` of the table.
  template <typename Signature, typename... Arguments>
  typename jni_table::Function<Signature>::Result call(int index, Arguments... arguments) {
    return jni_table::call<Signature>(this, index, arguments...);
  }
};

// The invocation interface of a JVM.
struct JavaVM {
  const jni_table::Entry* functions;

  jint GetEnv(void** env, jint version) {
    return jni_table::call<jint(void**, jint)>(this, java_vm_index::GetEnv, env, version);
  }
};
