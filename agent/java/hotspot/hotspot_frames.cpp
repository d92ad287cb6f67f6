#include "agent/java/hotspot/hotspot_frames.h"

#include "agent/java/hotspot/checked_memory.h"
#include "agent/java/jni_exception.h"
#include "agent/java/hotspot/vm_structs.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof::hotspot {
namespace {

using jfr::schema::FrameTypeKey;

// The JavaThread of the calling thread: java.lang.Thread.eetop holds it.
uintptr_t current_java_thread(JNIEnv* env) {
  jclass thread_class = env->FindClass("java/lang/Thread");
  if (jni_threw(env) || !thread_class) return 0;
  jlong java_thread = 0;
  jmethodID current = env->GetStaticMethodID(thread_class, "currentThread", "()Ljava/lang/Thread;");
  jfieldID eetop = jni_threw(env) || !current ? nullptr : env->GetFieldID(thread_class, "eetop", "J");
  jobject thread = jni_threw(env) || !eetop ? nullptr : env->CallStaticObjectMethod(thread_class, current);
  if (!jni_threw(env) && thread) java_thread = env->GetLongField(thread, eetop);
  if (thread) env->DeleteLocalRef(thread);
  env->DeleteLocalRef(thread_class);
  return static_cast<uintptr_t>(java_thread);
}

// Gives each AsyncGetCallTrace frame the type of the physical frame it came from.
class Labeler final : public JavaFrameVisitor {
 public:
  Labeler(const ASGCT_CallFrame* frames, int count, bool truncated, uint8_t* types)
      : frames_(frames), count_(count), truncated_(truncated), types_(types) {}

  bool visit(const JavaFrame& frame) override {
    if (next_ + frame.virtual_frames > count_ && !truncated_) return mismatch();
    for (int i = 0; i < frame.virtual_frames && next_ < count_; i++, next_++) {
      bool native_method = frames_[next_].lineno == kNativeMethodBci;
      switch (frame.kind) {
        case JavaFrameKind::kInterpreted:
          // The interpreter runs native methods too, through its native entry.
          types_[next_] = native_method ? jfr::schema::kNative : jfr::schema::kInterpreted;
          break;
        case JavaFrameKind::kNativeWrapper:
          if (!native_method) return mismatch();
          types_[next_] = jfr::schema::kNative;
          break;
        case JavaFrameKind::kCompiled:
          if (native_method) return mismatch();
          // Innermost first: all but the last virtual frame were inlined into it.
          types_[next_] = i + 1 < frame.virtual_frames ? jfr::schema::kInlined
                          : frame.c1                   ? jfr::schema::kC1Compiled
                                                       : jfr::schema::kJitCompiled;
          break;
      }
    }
    // A full trace may have been cut at `depth`; otherwise walk on to see it end.
    return next_ < count_ || !truncated_;
  }

  bool matched(WalkEnd end) const {
    if (mismatch_) return false;
    return end == WalkEnd::kEndOfStack ? next_ == count_ : end == WalkEnd::kStopped && truncated_;
  }

 private:
  bool mismatch() {
    mismatch_ = true;
    return false;
  }

  const ASGCT_CallFrame* frames_;
  int count_;
  bool truncated_;
  uint8_t* types_;
  int next_ = 0;
  bool mismatch_ = false;
};

}  // namespace

bool HotSpotFrames::init(JNIEnv* env, std::string* why_not) {
  ready_ = false;
  VmStructs vm;
  if (!vm.open(VmStructs::libjvm_symbols(), why_not) || !resolve_vm_layout(vm, &layout_, why_not) ||
      !code_.init(why_not)) {
    return false;
  }
  int probe = 0;
  if (layout_.immutable_data && !read_self(reinterpret_cast<uintptr_t>(&probe), &probe, sizeof probe)) {
    if (why_not) *why_not = "process_vm_readv is not permitted, and this JDK keeps debug info on the C heap";
    return false;
  }
  uintptr_t thread = env ? current_java_thread(env) : 0;
  uintptr_t env_address = reinterpret_cast<uintptr_t>(env);
  if (thread == 0 || env_address <= thread || env_address - thread >= layout_.java_thread_size) {
    if (why_not) *why_not = "cannot find the JNIEnv in its JavaThread";
    return false;
  }
  env_offset_ = env_address - thread;
  ready_ = true;
  return true;
}

bool HotSpotFrames::classify(JNIEnv* env, const ASGCT_CallFrame* frames, int count, int depth,
                             uint8_t* types_out) const {
  if (!ready_ || !env || !frames || !types_out || count <= 0 || count > depth) return false;
  // The JNIEnv lies inside the thread's JavaThread; walk() checks, from the stack
  // bounds it records, that this is the calling thread's.
  uintptr_t thread = reinterpret_cast<uintptr_t>(env) - env_offset_;
  uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  Labeler labeler(frames, count, count == depth, types_out);
  return labeler.matched(stack_.walk(thread, sp, labeler));
}

}  // namespace nmprof::hotspot
