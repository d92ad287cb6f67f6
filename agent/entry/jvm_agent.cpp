// The agent as a JVMTI agent: -agentpath:libnmprof.so=<options> at JVM start
// (Agent_OnLoad; also how `nmprof run -- java` brings it in, see jvm_launch.h) and
// the JVM attach API (Agent_OnAttach). The hooks and the recording are the same as
// for native programs; the JVM adds Java frames to stacks, Java thread names, and
// a flusher thread that names Java frames through JVMTI and writes the recording.
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/entry/attach_reply.h"
#include "agent/entry/context_natives.h"
#include "agent/java/java_methods.h"
#include "agent/java/java_stacks.h"
#include "agent/java/jni/jni.h"
#include "agent/java/jni/jvmti.h"
#include "agent/java/jni_exception.h"
#include "agent/log.h"
#include "agent/recording/recorder.h"
#include "agent/threads/java_thread_info.h"
#include "agent/threads/thread_state.h"
#include "protocol/attach_request.h"

namespace nmprof {
namespace {

constexpr jlong kFlushMillis = 100;  // a JVM killed with SIGKILL loses at most this

// The JVM side of the agent. Allocated once and never freed, like the agent itself.
struct Jvm {
  JavaVM* vm = nullptr;
  jvmtiEnv* jvmti = nullptr;
  JavaStacks stacks;
  JavaMethods methods;
  jmethodID thread_get_id = nullptr;
  jrawMonitorID flusher_wakeup = nullptr;
  bool dying = false;     // under flusher_wakeup
  std::mutex flushing;    // the flusher against the final flush at VMDeath
  std::mutex threads;     // JavaThreadInfo::thread against the thread's end
};

Jvm* g_jvm = nullptr;

template <typename T>
void deallocate(T* p) {
  if (p) g_jvm->jvmti->Deallocate(reinterpret_cast<unsigned char*>(p));
}

// A thread renamed after it started (Thread.setName) gets its entry written with the
// name it has now.
void refresh_names(JNIEnv* env, const std::vector<JavaThreadInfo*>& threads) {
  std::lock_guard<std::mutex> alive(g_jvm->threads);
  for (JavaThreadInfo* java : threads) {
    jvmtiThreadInfo info = {};
    if (!java->thread || g_jvm->jvmti->GetThreadInfo(java->thread, &info) != JVMTI_ERROR_NONE) continue;
    if (info.name && *java->name.load() != info.name) java->name.store(new std::string(info.name));
    deallocate(info.name);
    env->DeleteLocalRef(info.thread_group);
    env->DeleteLocalRef(info.context_class_loader);
  }
}

// Names the Java frames (and threads) of what is pending and writes it all out.
void flush_java(JNIEnv* env) {
  Recorder* recorder = agent_recorder();
  if (!recorder) return;
  std::lock_guard<std::mutex> one_at_a_time(g_jvm->flushing);
  std::vector<JavaThreadInfo*> threads;
  recorder->pending_java_threads(threads);
  refresh_names(env, threads);
  std::vector<uint64_t> methods;
  recorder->unresolved_java_methods(methods);
  g_jvm->methods.prepare(g_jvm->jvmti, env, methods);
  recorder->flush_resolving(g_jvm->methods);
}

// Writes every kFlushMillis while recording; sleeps until woken while stopped.
void JNICALL flusher(jvmtiEnv* jvmti, JNIEnv* env, void*) {
  AgentGuard all_of_it_is_ours;
  jvmti->RawMonitorEnter(g_jvm->flusher_wakeup);
  while (!g_jvm->dying) {
    Recorder* recorder = agent_recorder();
    jvmti->RawMonitorWait(g_jvm->flusher_wakeup, recorder && recorder->recording() ? kFlushMillis : 0);
    if (g_jvm->dying) break;
    jvmti->RawMonitorExit(g_jvm->flusher_wakeup);
    flush_java(env);
    jvmti->RawMonitorEnter(g_jvm->flusher_wakeup);
  }
  jvmti->RawMonitorExit(g_jvm->flusher_wakeup);
}

// Runs on `thread` itself: its Java name and id go into its ThreadState.
void describe_current_thread(JNIEnv* env, jthread thread) {
  jvmtiThreadInfo info = {};
  if (g_jvm->jvmti->GetThreadInfo(thread, &info) != JVMTI_ERROR_NONE) return;
  auto* java = new JavaThreadInfo{{new std::string(info.name ? info.name : "")}, 0};
  if (g_jvm->thread_get_id) {
    java->id = env->CallLongMethod(thread, g_jvm->thread_get_id);
    if (jni_threw(env)) java->id = 0;
  }
  java->thread = env->NewGlobalRef(thread);
  deallocate(info.name);
  env->DeleteLocalRef(info.thread_group);
  env->DeleteLocalRef(info.context_class_loader);
  t_state.java_thread = java;
  t_state.jni_env = env;
}

// AsyncGetCallTrace names only methods that have jmethodIDs: make them for a class.
void make_method_ids(jclass klass) {
  jint count = 0;
  jmethodID* methods = nullptr;
  if (g_jvm->jvmti->GetClassMethods(klass, &count, &methods) == JVMTI_ERROR_NONE) deallocate(methods);
}

void make_method_ids_of_loaded_classes(JNIEnv* env) {
  jint count = 0;
  jclass* classes = nullptr;
  if (g_jvm->jvmti->GetLoadedClasses(&count, &classes) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < count; i++) {
    make_method_ids(classes[i]);
    env->DeleteLocalRef(classes[i]);
  }
  deallocate(classes);
}

bool start_flusher(JNIEnv* env) {
  jclass thread_class = env->FindClass("java/lang/Thread");
  jmethodID constructor =
      jni_threw(env) || !thread_class ? nullptr : env->GetMethodID(thread_class, "<init>", "(Ljava/lang/String;)V");
  jstring name = jni_threw(env) || !constructor ? nullptr : env->NewStringUTF("nmprof flusher");
  jobject thread = jni_threw(env) || !name ? nullptr : env->NewObject(thread_class, constructor, name);
  jni_threw(env);
  bool started = thread && g_jvm->jvmti->RunAgentThread(thread, flusher, nullptr, JVMTI_THREAD_MIN_PRIORITY) ==
                               JVMTI_ERROR_NONE;
  env->DeleteLocalRef(thread);
  env->DeleteLocalRef(name);
  env->DeleteLocalRef(thread_class);
  return started;
}

// The VM is up (VMInit, or at once when attached): Java frames from now on.
void on_vm_ready(JNIEnv* env, jthread thread) {
  jclass thread_class = env->FindClass("java/lang/Thread");
  if (!jni_threw(env) && thread_class) g_jvm->thread_get_id = env->GetMethodID(thread_class, "getId", "()J");
  if (jni_threw(env)) g_jvm->thread_get_id = nullptr;
  env->DeleteLocalRef(thread_class);
  if (thread) describe_current_thread(env, thread);
  make_method_ids_of_loaded_classes(env);

  std::string why_not, why_not_typed;
  if (!g_jvm->stacks.init(g_jvm->vm, env, &why_not, &why_not_typed)) {
    log_line("no Java frames in stacks: %s; native frames are recorded", why_not.c_str());
    return;
  }
  if (!why_not_typed.empty())
    log_line("Java frame types unknown (%s): Java frames are labelled JIT compiled", why_not_typed.c_str());
  if (!start_flusher(env)) {
    log_line("cannot start the flusher thread; no Java frames in stacks");
    return;
  }
  agent_recorder()->set_background_flush(true);
  set_java_stacks(&g_jvm->stacks);
}

void JNICALL on_vm_init(jvmtiEnv*, JNIEnv* env, jthread thread) {
  AgentGuard guard;
  on_vm_ready(env, thread);
}

// JVM shutdown (normal end, System.exit, SIGINT/SIGTERM): the recording is complete.
void JNICALL on_vm_death(jvmtiEnv* jvmti, JNIEnv* env) {
  AgentGuard guard;
  jvmti->RawMonitorEnter(g_jvm->flusher_wakeup);
  g_jvm->dying = true;
  jvmti->RawMonitorNotifyAll(g_jvm->flusher_wakeup);
  jvmti->RawMonitorExit(g_jvm->flusher_wakeup);
  set_java_stacks(nullptr);
  flush_java(env);
  finish_agent();
}

void JNICALL on_thread_start(jvmtiEnv*, JNIEnv* env, jthread thread) {
  AgentGuard guard;
  describe_current_thread(env, thread);
}

// The JavaThreadInfo stays (the recording may refer to it); the thread reference goes.
void JNICALL on_thread_end(jvmtiEnv*, JNIEnv* env, jthread) {
  AgentGuard guard;
  if (auto* java = const_cast<JavaThreadInfo*>(t_state.java_thread)) {
    std::lock_guard<std::mutex> alive(g_jvm->threads);
    env->DeleteGlobalRef(java->thread);
    java->thread = nullptr;
  }
  t_state.jni_env = nullptr;
}

void JNICALL on_class_load(jvmtiEnv*, JNIEnv*, jthread, jclass) {}  // AsyncGetCallTrace needs it enabled

void JNICALL on_class_prepare(jvmtiEnv*, JNIEnv*, jthread, jclass klass) {
  AgentGuard guard;
  make_method_ids(klass);
}

constexpr jvmtiEvent kEvents[] = {JVMTI_EVENT_VM_INIT,     JVMTI_EVENT_VM_DEATH,  JVMTI_EVENT_THREAD_START,
                                  JVMTI_EVENT_THREAD_END,  JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE};

// Recording stopped: the JVM stops calling the agent, so that it costs nothing.
void quiet_events() {
  for (jvmtiEvent event : kEvents)
    if (event != JVMTI_EVENT_VM_DEATH) g_jvm->jvmti->SetEventNotificationMode(JVMTI_DISABLE, event, nullptr);
}

void wake_flusher() {
  g_jvm->jvmti->RawMonitorEnter(g_jvm->flusher_wakeup);
  g_jvm->jvmti->RawMonitorNotifyAll(g_jvm->flusher_wakeup);
  g_jvm->jvmti->RawMonitorExit(g_jvm->flusher_wakeup);
}

// Sets up JVMTI: capabilities, callbacks, events. One line and false on failure.
bool set_up_jvmti(JavaVM* vm) {
  if (g_jvm) return true;  // loaded twice (-agentpath and attach): one setup serves both
  auto* jvm = new Jvm;
  jvm->vm = vm;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvm->jvmti), JVMTI_VERSION_1_2) != JNI_OK) {
    log_line("the JVM offers no JVMTI 1.2 environment; native frames only");
    delete jvm;
    return false;
  }
  jvmtiEnv* jvmti = jvm->jvmti;
  jvmtiCapabilities capabilities = {};
  capabilities.can_get_line_numbers = 1;
  jvmti->AddCapabilities(&capabilities);  // without it frames just have no line numbers
  jvmtiEventCallbacks callbacks = {};
  callbacks.VMInit = on_vm_init;
  callbacks.VMDeath = on_vm_death;
  callbacks.ThreadStart = on_thread_start;
  callbacks.ThreadEnd = on_thread_end;
  callbacks.ClassLoad = on_class_load;
  callbacks.ClassPrepare = on_class_prepare;
  if (jvmti->CreateRawMonitor("nmprof flusher", &jvm->flusher_wakeup) != JVMTI_ERROR_NONE ||
      jvmti->SetEventCallbacks(&callbacks, sizeof callbacks) != JVMTI_ERROR_NONE) {
    log_line("cannot set JVMTI callbacks; native frames only");
    return false;
  }
  g_jvm = jvm;
  for (jvmtiEvent event : kEvents) jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
  return true;
}

bool recording() { return agent_recorder() && agent_recorder()->recording(); }

bool start_with(const char* text, AgentMode mode) {
  if (recording()) return true;  // preloaded already (nmprof run): its options stand
  AgentOptions options;
  if (auto error = parse_agent_options(text ? text : "", options)) {
    log_line("agent options: %s; not profiling", error->c_str());
    return false;
  }
  return start_agent(options, mode);
}

// One attach request; the return code and the reply file say how it went.
int attach(JavaVM* vm, const char* text) {
  AttachRequest request;
  if (auto error = parse_attach_request(text ? text : "", request)) {
    write_reply(request.options, {{"result", "error"}, {"message", *error}});
    return kAttachBadRequest;
  }
  JNIEnv* env = nullptr;
  vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6);
  int code = kAttachOk;
  switch (request.command) {
    case AttachCommand::Start: {
      if (recording()) {
        code = kAttachAlreadyRecording;
        break;
      }
      bool first = !g_jvm;
      if (!start_agent(request.options, AgentMode::JvmAttach) || !set_up_jvmti(vm)) {
        stop_agent();
        write_reply(request.options,
                    {{"result", "error"}, {"message", "the agent could not start (see the JVM's stderr)"}});
        return kAttachFailed;
      }
      if (!first) {
        // Started again after a stop: classes prepared meanwhile need their method ids.
        for (jvmtiEvent event : kEvents) g_jvm->jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
        if (env) make_method_ids_of_loaded_classes(env);
      } else if (env) {
        on_vm_ready(env, nullptr);
      }
      if (env) tell_loaded_context_classes(g_jvm->jvmti, env);
      wake_flusher();
      break;
    }
    case AttachCommand::Status:
      break;
    case AttachCommand::Dump:
      if (!recording()) {
        code = kAttachNotRecording;
        break;
      }
      if (env && g_jvm) flush_java(env);
      break;
    case AttachCommand::Stop:
      if (!recording()) {
        code = kAttachNotRecording;
        break;
      }
      if (env && g_jvm) flush_java(env);
      stop_agent();
      if (g_jvm) quiet_events();
      break;
  }
  AttachReply reply = status_reply();
  if (code != kAttachOk) reply["result"] = "error";
  write_reply(request.options, reply);
  return code;
}

}  // namespace
}  // namespace nmprof

// A failing agent returns JNI_OK all the same: the JVM runs on, unprofiled.
extern "C" JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  nmprof::AgentGuard guard;
  if (nmprof::start_with(options, nmprof::AgentMode::JvmStartup)) nmprof::set_up_jvmti(vm);
  return JNI_OK;
}

// Attach requests (attach_request.h). A non-zero result makes the JVM unload the
// library: harmless, since a library already loaded stays loaded.
extern "C" JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  nmprof::AgentGuard guard;
  return nmprof::attach(vm, options);
}

extern "C" JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {}
