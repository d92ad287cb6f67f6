#include "agent/java/java_stacks.h"

#include <algorithm>

namespace nmprof {

bool JavaStacks::init(JavaVM* vm, JNIEnv* env, std::string* why_not, std::string* why_not_typed) {
  vm_ = vm;
  if (!call_trace_.init(why_not)) return false;
  frame_types_.init(env, why_not_typed);
  return true;
}

JNIEnv* JavaStacks::env_of(ThreadState& t) {
  if (!t.jni_env) {
    // Threads the agent was not told about (started before it, or attached later):
    // GetEnv is a lookup of the current thread, safe in native and VM code.
    void* env = nullptr;
    if (vm_->GetEnv(&env, JNI_VERSION_1_6) == JNI_OK) t.jni_env = env;
  }
  return static_cast<JNIEnv*>(t.jni_env);
}

void JavaStacks::append(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch) {
  if (!end.in_unknown_code || stack.full()) return;
  JNIEnv* env = env_of(t);
  if (!env) return;
  int room = static_cast<int>(std::min(stack.capacity - stack.depth, scratch.depth()));
  // The scratch's room for runtime frames holds AsyncGetCallTrace's frames, then their types.
  static_assert(sizeof(hotspot::ASGCT_CallFrame) + sizeof(uint8_t) <= ThreadScratch::kRuntimeBytesPerFrame);
  static_assert(alignof(hotspot::ASGCT_CallFrame) <= alignof(void*));
  auto* frames = reinterpret_cast<hotspot::ASGCT_CallFrame*>(scratch.runtime_frames());
  int count = call_trace_.call(env, end.registers, frames, room);
  if (count <= 0) return;
  uint8_t* types = reinterpret_cast<uint8_t*>(frames + scratch.depth());
  bool typed = frame_types_.ready() && frame_types_.classify(env, frames, count, room, types);
  for (int i = 0; i < count; i++) {
    bool native = frames[i].lineno == hotspot::kNativeMethodBci;
    uint8_t type = native ? uint8_t{jfr::schema::kNative} : typed ? types[i] : uint8_t{jfr::schema::kJitCompiled};
    stack.push({reinterpret_cast<uint64_t>(frames[i].method_id), native ? 0 : frames[i].lineno, type, true});
  }
  if (count == room) stack.truncated = true;  // there may be more than it could hold
}

}  // namespace nmprof
