#include "profile/allocator_frames.h"

#include <string_view>

namespace nmprof::profile {
namespace {

constexpr std::string_view kAllocatorFunctions[] = {
    "malloc",         "calloc",        "realloc",  "reallocarray", "free",    "cfree",
    "posix_memalign", "aligned_alloc", "memalign", "valloc",       "pvalloc", "malloc_usable_size",
};

// The symbol without the decorations glibc and hooking profilers put around the
// public name: "__libc_malloc", "__GI___libc_malloc", "_int_malloc", "malloc_hook".
std::string_view undecorated(std::string_view name) {
  for (std::string_view prefix : {"__GI_", "__libc_", "__", "_int_"})
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  if (name.ends_with("_hook")) name.remove_suffix(5);
  return name;
}

}  // namespace

bool is_allocator_frame(const Frame& frame) {
  if (is_runtime_frame(frame.kind)) return false;
  std::string_view name = undecorated(frame.function);
  for (std::string_view f : kAllocatorFunctions)
    if (name == f) return true;
  return false;
}

}  // namespace nmprof::profile
