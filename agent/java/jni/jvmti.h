// The part of the JVM Tool Interface the agent uses, so that a build needs no JDK:
// written for nmprof from the JVMTI specification
// (docs.oracle.com/en/java/javase/17/docs/specs/jvmti.html), as jni.h is. The
// specification numbers the functions of a jvmtiEnv's table from 1 (number 1 is
// reserved), its events from 50, and lists the capabilities in the order of their bits.
#pragma once

#include "agent/java/jni/jni.h"

using jthread = jobject;
using jthreadGroup = jobject;
using jlocation = jlong;
struct JvmtiRawMonitor;
using jrawMonitorID = JvmtiRawMonitor*;

constexpr jint JVMTI_VERSION_1_2 = 0x30010200;
constexpr jint JVMTI_THREAD_MIN_PRIORITY = 1;

enum jvmtiError { JVMTI_ERROR_NONE = 0 };

enum jvmtiEventMode { JVMTI_DISABLE = 0, JVMTI_ENABLE = 1 };

enum jvmtiEvent {
  JVMTI_EVENT_VM_INIT = 50,
  JVMTI_EVENT_VM_DEATH = 51,
  JVMTI_EVENT_THREAD_START = 52,
  JVMTI_EVENT_THREAD_END = 53,
  JVMTI_EVENT_CLASS_LOAD = 55,
  JVMTI_EVENT_CLASS_PREPARE = 56,
};

struct jvmtiThreadInfo {
  char* name;
  jint priority;
  jboolean is_daemon;
  jthreadGroup thread_group;
  jobject context_class_loader;
};

struct jvmtiLineNumberEntry {
  jlocation start_location;
  jint line_number;
};

// 128 bits, one per capability in the specification's order.
struct jvmtiCapabilities {
  unsigned int : 12;  // can_tag_objects ... can_get_source_file_name
  unsigned int can_get_line_numbers : 1;
  unsigned int : 19;
  unsigned int later_capabilities[3];
};
static_assert(sizeof(jvmtiCapabilities) == 16);

struct jvmtiEnv;
using jvmtiEventVMInit = void (*)(jvmtiEnv* jvmti, JNIEnv* env, jthread thread);
using jvmtiEventVMDeath = void (*)(jvmtiEnv* jvmti, JNIEnv* env);
using jvmtiEventThreadStart = void (*)(jvmtiEnv* jvmti, JNIEnv* env, jthread thread);
using jvmtiEventThreadEnd = void (*)(jvmtiEnv* jvmti, JNIEnv* env, jthread thread);
using jvmtiEventClassLoad = void (*)(jvmtiEnv* jvmti, JNIEnv* env, jthread thread, jclass type);
using jvmtiEventClassPrepare = void (*)(jvmtiEnv* jvmti, JNIEnv* env, jthread thread, jclass type);
using jvmtiStartFunction = void (*)(jvmtiEnv* jvmti, JNIEnv* env, void* argument);

// One callback per event, from event 50 (VMInit) to event 86, the last of JDK 17.
struct jvmtiEventCallbacks {
  jvmtiEventVMInit VMInit;
  jvmtiEventVMDeath VMDeath;
  jvmtiEventThreadStart ThreadStart;
  jvmtiEventThreadEnd ThreadEnd;
  void* ClassFileLoadHook;
  jvmtiEventClassLoad ClassLoad;
  jvmtiEventClassPrepare ClassPrepare;
  void* later_events[30];
};

// The specification's numbers of the functions of a jvmtiEnv's table.
namespace jvmti_number {
enum : int {
  SetEventNotificationMode = 2,
  GetThreadInfo = 9,
  RunAgentThread = 12,
  CreateRawMonitor = 31,
  RawMonitorEnter = 33,
  RawMonitorExit = 34,
  RawMonitorWait = 35,
  RawMonitorNotifyAll = 37,
  Deallocate = 47,
  GetClassSignature = 48,
  GetClassModifiers = 51,
  GetClassMethods = 52,
  GetMethodName = 64,
  GetMethodDeclaringClass = 65,
  GetMethodModifiers = 66,
  GetLineNumberTable = 70,
  GetLoadedClasses = 78,
  SetEventCallbacks = 122,
  AddCapabilities = 142,
};
}  // namespace jvmti_number

struct jvmtiEnv {
  const jni_table::Entry* functions;

  jvmtiError SetEventNotificationMode(jvmtiEventMode mode, jvmtiEvent event, jthread thread) {
    return call<jvmtiError(jvmtiEventMode, jvmtiEvent, jthread, ...)>(jvmti_number::SetEventNotificationMode, mode,
                                                                      event, thread);
  }
  jvmtiError GetThreadInfo(jthread thread, jvmtiThreadInfo* info) {
    return call<jvmtiError(jthread, jvmtiThreadInfo*)>(jvmti_number::GetThreadInfo, thread, info);
  }
  jvmtiError RunAgentThread(jthread thread, jvmtiStartFunction function, const void* argument, jint priority) {
    return call<jvmtiError(jthread, jvmtiStartFunction, const void*, jint)>(jvmti_number::RunAgentThread, thread,
                                                                            function, argument, priority);
  }
  jvmtiError CreateRawMonitor(const char* name, jrawMonitorID* monitor) {
    return call<jvmtiError(const char*, jrawMonitorID*)>(jvmti_number::CreateRawMonitor, name, monitor);
  }
  jvmtiError RawMonitorEnter(jrawMonitorID monitor) {
    return call<jvmtiError(jrawMonitorID)>(jvmti_number::RawMonitorEnter, monitor);
  }
  jvmtiError RawMonitorExit(jrawMonitorID monitor) {
    return call<jvmtiError(jrawMonitorID)>(jvmti_number::RawMonitorExit, monitor);
  }
  jvmtiError RawMonitorWait(jrawMonitorID monitor, jlong milliseconds) {
    return call<jvmtiError(jrawMonitorID, jlong)>(jvmti_number::RawMonitorWait, monitor, milliseconds);
  }
  jvmtiError RawMonitorNotifyAll(jrawMonitorID monitor) {
    return call<jvmtiError(jrawMonitorID)>(jvmti_number::RawMonitorNotifyAll, monitor);
  }
  jvmtiError Deallocate(unsigned char* memory) {
    return call<jvmtiError(unsigned char*)>(jvmti_number::Deallocate, memory);
  }
  jvmtiError GetClassSignature(jclass type, char** signature, char** generic) {
    return call<jvmtiError(jclass, char**, char**)>(jvmti_number::GetClassSignature, type, signature, generic);
  }
  jvmtiError GetClassModifiers(jclass type, jint* modifiers) {
    return call<jvmtiError(jclass, jint*)>(jvmti_number::GetClassModifiers, type, modifiers);
  }
  jvmtiError GetClassMethods(jclass type, jint* count, jmethodID** methods) {
    return call<jvmtiError(jclass, jint*, jmethodID**)>(jvmti_number::GetClassMethods, type, count, methods);
  }
  jvmtiError GetMethodName(jmethodID method, char** name, char** signature, char** generic) {
    return call<jvmtiError(jmethodID, char**, char**, char**)>(jvmti_number::GetMethodName, method, name, signature,
                                                               generic);
  }
  jvmtiError GetMethodDeclaringClass(jmethodID method, jclass* type) {
    return call<jvmtiError(jmethodID, jclass*)>(jvmti_number::GetMethodDeclaringClass, method, type);
  }
  jvmtiError GetMethodModifiers(jmethodID method, jint* modifiers) {
    return call<jvmtiError(jmethodID, jint*)>(jvmti_number::GetMethodModifiers, method, modifiers);
  }
  jvmtiError GetLineNumberTable(jmethodID method, jint* count, jvmtiLineNumberEntry** table) {
    return call<jvmtiError(jmethodID, jint*, jvmtiLineNumberEntry**)>(jvmti_number::GetLineNumberTable, method, count,
                                                                      table);
  }
  jvmtiError GetLoadedClasses(jint* count, jclass** classes) {
    return call<jvmtiError(jint*, jclass**)>(jvmti_number::GetLoadedClasses, count, classes);
  }
  jvmtiError SetEventCallbacks(const jvmtiEventCallbacks* callbacks, jint size) {
    return call<jvmtiError(const jvmtiEventCallbacks*, jint)>(jvmti_number::SetEventCallbacks, callbacks, size);
  }
  jvmtiError AddCapabilities(const jvmtiCapabilities* capabilities) {
    return call<jvmtiError(const jvmtiCapabilities*)>(jvmti_number::AddCapabilities, capabilities);
  }

 private:
  // The function the specification numbers `number` (its index in the table is one less).
  template <typename Signature, typename... Arguments>
  jvmtiError call(int number, Arguments... arguments) {
    return jni_table::call<Signature>(this, number - 1, arguments...);
  }
};
