// What the agent's own jni.h and jvmti.h (agent/java/jni/) must agree with the JDK's
// on: the functions' places in their tables, the structures' layouts, the constants.
// jni_layout.inc reads them, compiled into jdk_layout.cpp against the JDK's headers and
// into jni_headers_test.cpp against the agent's; the lists below name what it reads.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

// clang-format off
#define NMPROF_JNI_FUNCTIONS(X)                                                                                      \
  X(FindClass) X(ExceptionClear) X(NewGlobalRef) X(DeleteGlobalRef) X(DeleteLocalRef) X(NewObject) X(GetMethodID) \
  X(CallLongMethod) X(GetFieldID) X(GetLongField) X(GetStaticMethodID) X(CallStaticObjectMethod)                  \
  X(CallStaticIntMethod) X(CallStaticVoidMethod) X(GetStaticFieldID) X(SetStaticBooleanField) X(NewStringUTF)     \
  X(GetStringUTFChars) X(ReleaseStringUTFChars) X(RegisterNatives) X(ExceptionCheck) X(NewDirectByteBuffer)

#define NMPROF_JVMTI_FUNCTIONS(X)                                                                             \
  X(SetEventNotificationMode) X(GetThreadInfo) X(RunAgentThread) X(CreateRawMonitor) X(RawMonitorEnter)    \
  X(RawMonitorExit) X(RawMonitorWait) X(RawMonitorNotifyAll) X(Deallocate) X(GetClassSignature)            \
  X(GetClassModifiers) X(GetClassMethods) X(GetMethodName) X(GetMethodDeclaringClass) X(GetMethodModifiers) \
  X(GetLineNumberTable) X(GetLoadedClasses) X(SetEventCallbacks) X(AddCapabilities)

#define NMPROF_JNI_CONSTANTS(X)                                                                            \
  X(JNI_FALSE) X(JNI_TRUE) X(JNI_OK) X(JNI_ERR) X(JNI_VERSION_1_6) X(JVMTI_VERSION_1_2)                     \
  X(JVMTI_THREAD_MIN_PRIORITY) X(JVMTI_ERROR_NONE) X(JVMTI_DISABLE) X(JVMTI_ENABLE) X(JVMTI_EVENT_VM_INIT) \
  X(JVMTI_EVENT_VM_DEATH) X(JVMTI_EVENT_THREAD_START) X(JVMTI_EVENT_THREAD_END) X(JVMTI_EVENT_CLASS_LOAD)   \
  X(JVMTI_EVENT_CLASS_PREPARE)

// (structure, member) pairs whose offsets, and structures whose sizes, must agree.
#define NMPROF_JNI_MEMBERS(X)                                                                                   \
  X(JNINativeMethod, name) X(JNINativeMethod, signature) X(JNINativeMethod, fnPtr) X(JavaVMOption, optionString) \
  X(JavaVMOption, extraInfo) X(JavaVMInitArgs, version) X(JavaVMInitArgs, nOptions) X(JavaVMInitArgs, options)   \
  X(JavaVMInitArgs, ignoreUnrecognized) X(jvmtiThreadInfo, name) X(jvmtiThreadInfo, priority)                    \
  X(jvmtiThreadInfo, is_daemon) X(jvmtiThreadInfo, thread_group) X(jvmtiThreadInfo, context_class_loader)         \
  X(jvmtiLineNumberEntry, start_location) X(jvmtiLineNumberEntry, line_number) X(jvmtiEventCallbacks, VMInit)     \
  X(jvmtiEventCallbacks, VMDeath) X(jvmtiEventCallbacks, ThreadStart) X(jvmtiEventCallbacks, ThreadEnd)           \
  X(jvmtiEventCallbacks, ClassLoad) X(jvmtiEventCallbacks, ClassPrepare)

#define NMPROF_JNI_STRUCTURES(X)                                                                                 \
  X(JNINativeMethod) X(JavaVMOption) X(JavaVMInitArgs) X(jvmtiThreadInfo) X(jvmtiLineNumberEntry) X(jvmtiCapabilities) \
  X(jvmtiEventCallbacks)
// clang-format on

struct JniLayout {
  std::map<std::string, long> jni_indices;    // in a JNIEnv's table
  long java_vm_get_env = 0;                   // GetEnv's index in a JavaVM's table
  std::map<std::string, long> jvmti_numbers;  // the specification's: index in the table + 1
  std::map<std::string, long> constants;
  std::map<std::string, size_t> offsets;  // "structure.member"
  std::map<std::string, size_t> sizes;
  std::vector<unsigned char> line_numbers_capability;  // jvmtiCapabilities with can_get_line_numbers set
};

// Read from the JDK's headers.
JniLayout jdk_layout();
