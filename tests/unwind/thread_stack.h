// The end (highest address) of the calling thread's stack, for starting walks.
#pragma once

#include <pthread.h>

#include <cstdint>

namespace nmprof::unwind::test {

inline uintptr_t thread_stack_end() {
  pthread_attr_t attributes;
  void* low = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
  pthread_attr_getstack(&attributes, &low, &size);
  pthread_attr_destroy(&attributes);
  return reinterpret_cast<uintptr_t>(low) + size;
}

}  // namespace nmprof::unwind::test
