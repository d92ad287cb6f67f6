#include "agent/java/hotspot/asgct.h"

#include <dlfcn.h>
#include <ucontext.h>

#include <cstring>

namespace nmprof::hotspot {

bool AsyncGetCallTrace::init(std::string* why_not) {
  void* libjvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
  void* symbol = libjvm ? dlsym(libjvm, "AsyncGetCallTrace") : nullptr;
  if (libjvm) dlclose(libjvm);
  if (!symbol) {
    if (why_not) *why_not = libjvm ? "libjvm.so exports no AsyncGetCallTrace" : "libjvm.so is not loaded";
    return false;
  }
  function_ = reinterpret_cast<Function>(symbol);
  return true;
}

int AsyncGetCallTrace::call(JNIEnv* env, const unwind::Registers& registers, ASGCT_CallFrame* frames,
                            int depth) const {
  if (!function_ || !env || depth <= 0) return 0;
  // HotSpot reads only the general registers of the context, and for a thread in
  // native or VM code only the frame anchor.
  ucontext_t context;
  std::memset(&context, 0, sizeof context);
  context.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(registers.pc);
  context.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(registers.sp);
  context.uc_mcontext.gregs[REG_RBP] = static_cast<greg_t>(registers.fp);
  ASGCT_CallTrace trace{env, 0, frames};
  function_(&trace, depth, &context);
  return trace.num_frames;
}

}  // namespace nmprof::hotspot
