// The JVM side of the frame classifier tests: a JVMTI agent (-agentpath) whose
// native methods for FramesTarget capture their own stack with AsyncGetCallTrace,
// classify it with HotSpotFrames, and report each frame's method and type.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <ctime>
#include <string>

#include "agent/java/hotspot/asgct.h"
#include "agent/java/hotspot/hotspot_frames.h"
#include "agent/java/jni/jvmti.h"
#include "agent/unwind/registers.h"
#include "formats/jfr/nmprof_schema.h"

namespace {

using nmprof::hotspot::ASGCT_CallFrame;

constexpr int kMaxDepth = 128;
// FramesTarget's probe modes
constexpr int kGiveUp = -1;
constexpr int kDeoptimize = -2;
constexpr int kBench = -3;

jvmtiEnv* g_jvmti = nullptr;
nmprof::hotspot::AsyncGetCallTrace g_asgct;
nmprof::hotspot::HotSpotFrames g_frames;
std::string g_setup_error;
std::string g_report = "nothing recorded";
std::atomic<int> g_warmup_ok{0};
std::atomic<int> g_warmup_failed{0};

std::mutex g_park_mutex;
std::condition_variable g_park_changed;
JNIEnv* g_parked_env = nullptr;
bool g_released = false;

const char* type_name(uint8_t type) {
  switch (type) {
    case nmprof::jfr::schema::kInterpreted: return "interpreted";
    case nmprof::jfr::schema::kJitCompiled: return "compiled";
    case nmprof::jfr::schema::kC1Compiled: return "c1";
    case nmprof::jfr::schema::kInlined: return "inlined";
    case nmprof::jfr::schema::kNative: return "native";
    default: return "?";
  }
}

// "Class.method" with the class's simple name.
std::string method_name(jmethodID method) {
  char* name = nullptr;
  char* signature = nullptr;
  jclass holder = nullptr;
  std::string result = "?";
  if (method && g_jvmti->GetMethodName(method, &name, nullptr, nullptr) == JVMTI_ERROR_NONE &&
      g_jvmti->GetMethodDeclaringClass(method, &holder) == JVMTI_ERROR_NONE &&
      g_jvmti->GetClassSignature(holder, &signature, nullptr) == JVMTI_ERROR_NONE) {
    std::string klass(signature);  // Lpkg/Name;
    klass = klass.substr(1, klass.size() - 2);
    klass = klass.substr(klass.rfind('/') + 1);
    result = klass + "." + name;
  }
  g_jvmti->Deallocate(reinterpret_cast<unsigned char*>(name));
  g_jvmti->Deallocate(reinterpret_cast<unsigned char*>(signature));
  return result;
}

std::string describe(const ASGCT_CallFrame* frames, int count, const uint8_t* types) {
  std::string text;
  for (int i = 0; i < count; i++) {
    if (i) text += ' ';
    text += method_name(frames[i].method_id);
    if (types) text += std::string(":") + type_name(types[i]);
  }
  return text;
}

// This thread's frames as AsyncGetCallTrace sees them from here.
[[gnu::noinline]] int capture(JNIEnv* env, ASGCT_CallFrame* frames, int depth) {
  return g_asgct.call(env, nmprof::unwind::current_registers(), frames, depth);
}

// How classify answers for this thread's frames, altered in ways a physical walk
// must notice. frames[0] is the probe, frames[1] its compiled caller.
std::string give_up_report(JNIEnv* env, ASGCT_CallFrame* frames, int count) {
  JNIEnv* parked;
  {
    std::unique_lock lock(g_park_mutex);
    g_park_changed.wait(lock, [] { return g_parked_env != nullptr; });
    parked = g_parked_env;
  }
  uint8_t types[kMaxDepth + 1];
  ASGCT_CallFrame more[kMaxDepth + 1];
  std::string text;
  auto attempt = [&](const char* name, JNIEnv* e, const ASGCT_CallFrame* f, int n, int depth) {
    if (!text.empty()) text += ' ';
    text += std::string(name) + "=" + (g_frames.classify(e, f, n, depth, types) ? "classified" : "unknown");
  };
  if (count < 2 || count >= kMaxDepth) return "unexpected frame count";
  attempt("intact", env, frames, count, kMaxDepth);
  // One frame fewer than the walk finds, the trace not being full.
  attempt("missing_frame", env, frames, count - 1, kMaxDepth);
  // One frame more than the walk finds.
  std::copy(frames, frames + count, more);
  more[count] = frames[count - 1];
  attempt("extra_frame", env, more, count + 1, kMaxDepth);
  // The native method's frame said to be Java code, and its compiled caller native.
  more[0].lineno = 0;
  attempt("native_as_java", env, more, count, kMaxDepth);
  more[0] = frames[0];
  more[1].lineno = nmprof::hotspot::kNativeMethodBci;
  attempt("java_as_native", env, more, count, kMaxDepth);
  // Another thread's JNIEnv: its JavaThread's stack is not this one.
  attempt("other_thread", parked, frames, count, kMaxDepth);
  attempt("no_frames", env, frames, 0, kMaxDepth);
  return text;
}

double seconds_now() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// What one classify (and, for comparison, one AsyncGetCallTrace) costs here.
std::string bench_report(JNIEnv* env, const ASGCT_CallFrame* frames, int count) {
  constexpr int kRounds = 200000;
  uint8_t types[kMaxDepth];
  int classified = 0;
  double start = seconds_now();
  for (int i = 0; i < kRounds; i++) classified += g_frames.classify(env, frames, count, kMaxDepth, types);
  double classify_ns = (seconds_now() - start) * 1e9 / kRounds;
  ASGCT_CallFrame again[kMaxDepth];
  start = seconds_now();
  for (int i = 0; i < kRounds; i++) capture(env, again, kMaxDepth);
  double asgct_ns = (seconds_now() - start) * 1e9 / kRounds;
  return "frames=" + std::to_string(count) + " classified=" + std::to_string(classified) +
         " classify_ns=" + std::to_string(static_cast<int>(classify_ns)) +
         " asgct_ns=" + std::to_string(static_cast<int>(asgct_ns));
}

void JNICALL on_class_prepare(jvmtiEnv* jvmti, JNIEnv*, jthread, jclass klass) {
  // AsyncGetCallTrace reports only methods whose jmethodIDs exist: make them.
  jint count;
  jmethodID* methods;
  if (jvmti->GetClassMethods(klass, &count, &methods) == JVMTI_ERROR_NONE) {
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(methods));
  }
}

void JNICALL on_class_load(jvmtiEnv*, JNIEnv*, jthread, jclass) {}

void JNICALL on_vm_init(jvmtiEnv*, JNIEnv* env, jthread) {
  std::string why_not;
  if (!g_asgct.init(&why_not) || !g_frames.init(env, &why_not)) g_setup_error = why_not;
}

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char*, void*) {
  if (vm->GetEnv(reinterpret_cast<void**>(&g_jvmti), JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmtiEventCallbacks callbacks{};
  callbacks.VMInit = on_vm_init;
  callbacks.ClassLoad = on_class_load;
  callbacks.ClassPrepare = on_class_prepare;
  g_jvmti->SetEventCallbacks(&callbacks, sizeof callbacks);
  // AsyncGetCallTrace answers only while ClassLoad events are enabled.
  for (jvmtiEvent event : {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE}) {
    g_jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
  }
  return JNI_OK;
}

JNIEXPORT jint JNICALL Java_FramesTarget_probe(JNIEnv* env, jclass klass, jint mode) {
  if (mode == kDeoptimize) {
    jmethodID load = env->GetStaticMethodID(klass, "iLoadSubclass", "()V");
    if (load) env->CallStaticVoidMethod(klass, load);
  }
  ASGCT_CallFrame frames[kMaxDepth];
  uint8_t types[kMaxDepth];
  int depth = mode > 1 ? mode : kMaxDepth;
  int count = capture(env, frames, depth);
  bool classified = count > 0 && g_frames.classify(env, frames, count, depth, types);
  if (mode == 0) {
    (classified ? g_warmup_ok : g_warmup_failed)++;
  } else if (!g_setup_error.empty()) {
    g_report = "setup failed: " + g_setup_error;
  } else if (count <= 0) {
    g_report = "AsyncGetCallTrace gave " + std::to_string(count);
  } else if (mode == kGiveUp) {
    g_report = give_up_report(env, frames, count);
  } else if (mode == kBench) {
    g_report = bench_report(env, frames, count);
  } else {
    g_report = classified ? describe(frames, count, types) : "unknown: " + describe(frames, count, nullptr);
  }
  return classified;
}

JNIEXPORT jstring JNICALL Java_FramesTarget_report(JNIEnv* env, jclass) { return env->NewStringUTF(g_report.c_str()); }

JNIEXPORT jstring JNICALL Java_FramesTarget_warmupReport(JNIEnv* env, jclass) {
  std::string text = "ok=" + std::to_string(g_warmup_ok) + " failed=" + std::to_string(g_warmup_failed);
  return env->NewStringUTF(text.c_str());
}

JNIEXPORT jint JNICALL Java_FramesTarget_upcall(JNIEnv* env, jclass klass, jint mode) {
  jmethodID target = env->GetStaticMethodID(klass, "cUpcallTarget", "(I)I");
  return target ? env->CallStaticIntMethod(klass, target, mode) : -1;
}

JNIEXPORT void JNICALL Java_FramesTarget_parkInNative(JNIEnv* env, jclass) {
  std::unique_lock lock(g_park_mutex);
  g_parked_env = env;
  g_park_changed.notify_all();
  g_park_changed.wait(lock, [] { return g_released; });
}

JNIEXPORT void JNICALL Java_FramesTarget_release(JNIEnv*, jclass) {
  std::lock_guard lock(g_park_mutex);
  g_released = true;
  g_park_changed.notify_all();
}

}  // extern "C"
