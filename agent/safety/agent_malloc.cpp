// The malloc family as the agent's own code and its static libstdc++ see it:
// agent_memory, never the host's heap. These definitions are local to
// libnmprof.so (the version script exports only the entry points), so calls made
// from inside the agent bind here and the host's calls never do. Only this shared
// library has them; the agent's unit tests use libc's.
#include <atomic>
#include <cerrno>
#include <cstddef>

#include "agent/hooks/symbol_binding.h"
#include "agent/safety/agent_memory.h"

namespace {

namespace memory = nmprof::agent_memory;

void* allocated_or_enomem(void* p) {
  if (!p) errno = ENOMEM;
  return p;
}

// The host's allocator, for a block of its own that libc hands the agent to free:
// its definition, not dlsym's answer, which may be a PLT entry whose slot is hooked.
template <typename F>
F host_function(std::atomic<F>& cached, const char* name) {
  F f = cached.load(std::memory_order_acquire);
  if (!f) {
    auto own_code = reinterpret_cast<const void*>(&allocated_or_enomem);
    f = reinterpret_cast<F>(nmprof::symbol_binding(name, own_code).definition);
    cached.store(f, std::memory_order_release);
  }
  return f;
}

std::atomic<void (*)(void*)> g_host_free{nullptr};
std::atomic<void* (*)(void*, size_t)> g_host_realloc{nullptr};

}  // namespace

extern "C" {

void* malloc(size_t size) { return allocated_or_enomem(memory::allocate(size)); }

void* calloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) return allocated_or_enomem(nullptr);
  return allocated_or_enomem(memory::allocate_zeroed(bytes));
}

void* realloc(void* p, size_t size) {
  if (p && !memory::owns(p)) return host_function(g_host_realloc, "realloc")(p, size);
  if (p && size == 0) {
    memory::release(p);
    return nullptr;
  }
  return allocated_or_enomem(memory::reallocate(p, size));
}

void free(void* p) {
  if (!p) return;
  if (memory::owns(p))
    memory::release(p);
  else
    host_function(g_host_free, "free")(p);
}

void* aligned_alloc(size_t align, size_t size) { return allocated_or_enomem(memory::allocate(size, align)); }

void* memalign(size_t align, size_t size) { return aligned_alloc(align, size); }

int posix_memalign(void** out, size_t align, size_t size) {
  if (align < sizeof(void*) || (align & (align - 1))) return EINVAL;
  void* p = memory::allocate(size, align);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"
