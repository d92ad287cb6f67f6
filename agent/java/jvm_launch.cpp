#include "agent/java/jvm_launch.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "agent/java/jni/jni.h"
#include "agent/threads/thread_state.h"

namespace nmprof {
namespace {

using CreateJavaVm = jint (*)(JavaVM**, void**, void*);

std::atomic<CreateJavaVm> g_real{nullptr};

std::string agent_library_path() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&wrap_create_java_vm), &info) == 0 || !info.dli_fname) return {};
  return info.dli_fname;
}

// The user may have named the agent already (-agentpath:.../libnmprof.so=...).
bool names_agent(const JavaVMInitArgs& args) {
  for (jint i = 0; i < args.nOptions; i++) {
    const char* option = args.options[i].optionString;
    if (option && strncmp(option, "-agentpath:", 11) == 0 && strstr(option, "libnmprof.so")) return true;
  }
  return false;
}

jint JNICALL create_java_vm_with_agent(JavaVM** vm, void** env, void* arguments) {
  CreateJavaVm real = g_real.load();
  auto* args = static_cast<JavaVMInitArgs*>(arguments);
  std::string library;
  std::vector<JavaVMOption> options;
  std::string agent_option;
  {
    AgentGuard guard;
    library = agent_library_path();
    if (!args || library.empty() || names_agent(*args)) return real(vm, env, arguments);
    options.assign(args->options, args->options + args->nOptions);
    agent_option = "-agentpath:" + library;
    options.push_back({agent_option.data(), nullptr});
  }
  JavaVMInitArgs with_agent = *args;
  with_agent.options = options.data();
  with_agent.nOptions = static_cast<jint>(options.size());
  return real(vm, env, &with_agent);
}

}  // namespace

void* wrap_create_java_vm(void* real) {
  CreateJavaVm expected = nullptr;
  g_real.compare_exchange_strong(expected, reinterpret_cast<CreateJavaVm>(real));
  return reinterpret_cast<void*>(&create_java_vm_with_agent);
}

}  // namespace nmprof
