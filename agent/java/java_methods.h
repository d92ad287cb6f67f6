// Names Java frames the way JDK Flight Recorder does: class (internal form, with its
// package), method name, descriptor, modifiers, and the line of each bytecode
// index. JVMTI cannot be called on the sampled path (the thread may be inside the
// VM, holding its locks), so the agent's flusher thread looks methods up first,
// without the recorder's lock (prepare), and then resolves frames from what it
// learnt, under that lock (resolve).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/java/jni/jni.h"
#include "agent/java/jni/jvmti.h"
#include "agent/stacks/frame_resolver.h"

namespace nmprof {

class JavaMethods : public FrameResolver {
 public:
  // Looks up the methods not seen before. On a thread attached to the VM.
  void prepare(jvmtiEnv* jvmti, JNIEnv* env, const std::vector<uint64_t>& method_ids);
  // Leaves method 0 for an id prepare() has not seen.
  void resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) override;

 private:
  struct Method {
    bool known = false;  // false: the class was unloaded, or JVMTI failed
    std::string klass;   // java/util/zip/Deflater
    std::string name;
    std::string descriptor;
    int modifiers = 0;
    int class_modifiers = 0;
    std::vector<std::pair<int32_t, int32_t>> lines;  // (first bytecode index, line), sorted
  };
  static Method look_up(jvmtiEnv* jvmti, JNIEnv* env, jmethodID id);
  static int32_t line_of(const Method& m, int32_t bci);

  std::unordered_map<uint64_t, Method> methods_;
};

}  // namespace nmprof
