#include "agent/java/java_methods.h"

#include <algorithm>

#include "formats/jfr/nmprof_schema.h"

namespace nmprof {
namespace {

// JVMTI hands out strings it allocated; this gives them back.
class JvmtiString {
 public:
  explicit JvmtiString(jvmtiEnv* jvmti) : jvmti_(jvmti) {}
  ~JvmtiString() {
    if (p_) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(p_));
  }
  char** out() { return &p_; }
  std::string str() const { return p_ ? p_ : ""; }

 private:
  jvmtiEnv* jvmti_;
  char* p_ = nullptr;
};

// "Ljava/util/zip/Deflater;" -> "java/util/zip/Deflater"; arrays stay as they are.
std::string class_name_of(const std::string& signature) {
  if (signature.size() >= 2 && signature.front() == 'L' && signature.back() == ';')
    return signature.substr(1, signature.size() - 2);
  return signature;
}

}  // namespace

JavaMethods::Method JavaMethods::look_up(jvmtiEnv* jvmti, JNIEnv* env, jmethodID id) {
  Method m;
  JvmtiString name(jvmti), descriptor(jvmti), class_signature(jvmti);
  jclass klass = nullptr;
  if (jvmti->GetMethodName(id, name.out(), descriptor.out(), nullptr) != JVMTI_ERROR_NONE ||
      jvmti->GetMethodDeclaringClass(id, &klass) != JVMTI_ERROR_NONE)
    return m;
  if (jvmti->GetClassSignature(klass, class_signature.out(), nullptr) == JVMTI_ERROR_NONE) {
    m.known = true;
    m.klass = class_name_of(class_signature.str());
    m.name = name.str();
    m.descriptor = descriptor.str();
    jvmti->GetMethodModifiers(id, &m.modifiers);
    jvmti->GetClassModifiers(klass, &m.class_modifiers);
    jint count = 0;
    jvmtiLineNumberEntry* table = nullptr;
    if (jvmti->GetLineNumberTable(id, &count, &table) == JVMTI_ERROR_NONE) {
      for (jint i = 0; i < count; i++)
        m.lines.emplace_back(static_cast<int32_t>(table[i].start_location), table[i].line_number);
      jvmti->Deallocate(reinterpret_cast<unsigned char*>(table));
      std::sort(m.lines.begin(), m.lines.end());
    }
  }
  env->DeleteLocalRef(klass);
  return m;
}

void JavaMethods::prepare(jvmtiEnv* jvmti, JNIEnv* env, const std::vector<uint64_t>& method_ids) {
  for (uint64_t id : method_ids) {
    if (methods_.count(id)) continue;
    methods_.emplace(id, look_up(jvmti, env, reinterpret_cast<jmethodID>(id)));
  }
}

int32_t JavaMethods::line_of(const Method& m, int32_t bci) {
  auto after = std::upper_bound(m.lines.begin(), m.lines.end(), std::make_pair(bci, INT32_MAX));
  return after == m.lines.begin() ? -1 : std::prev(after)->second;
}

void JavaMethods::resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) {
  auto it = methods_.find(frame.id);
  if (it == methods_.end()) return;  // not looked up yet: stays pending for the next round
  line = -1;
  if (!it->second.known) {  // gone with its class, or JVMTI refused
    method = pools.method(pools.klass("[unknown]"), "[unknown Java method]", "()V", 0);
    return;
  }
  const Method& m = it->second;
  size_t slash = m.klass.rfind('/');
  uint32_t package = slash == std::string::npos ? 0 : pools.package(std::string_view(m.klass).substr(0, slash));
  method = pools.method(pools.klass(m.klass, package, m.class_modifiers), m.name, m.descriptor, m.modifiers);
  line = line_of(m, frame.bci);
}

}  // namespace nmprof
