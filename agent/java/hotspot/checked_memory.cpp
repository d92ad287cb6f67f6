#include "agent/java/hotspot/checked_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace nmprof::hotspot {

bool read_self(uintptr_t address, void* out, size_t size) {
  if (size == 0) return true;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool ObjectBytes::read(uintptr_t address, void* out, size_t size) {
  if (!object_.contains(address, size)) return false;
  if (mapped_) {
    std::memcpy(out, reinterpret_cast<const void*>(address), size);
    return true;
  }
  if (!window_.contains(address, size)) {
    if (size > kWindow) return read_self(address, out, size);
    // The whole object if it fits, else a window centred on the request, where
    // the next reads of a binary search or a backward chain are likely to be.
    uintptr_t begin = object_.end - object_.begin <= kWindow
                          ? object_.begin
                          : address - std::min<uintptr_t>(address - object_.begin, (kWindow - size) / 2);
    uintptr_t end = begin + std::min<uintptr_t>(kWindow, object_.end - begin);
    window_ = {};
    if (!read_self(begin, bytes_, end - begin)) return false;
    window_ = {begin, end};
  }
  std::memcpy(out, bytes_ + (address - window_.begin), size);
  return true;
}

size_t ObjectBytes::read_some(uintptr_t address, void* out, size_t size) {
  if (!object_.contains(address, 0)) return 0;
  size = std::min<size_t>(size, object_.end - address);
  return read(address, out, size) ? size : 0;
}

}  // namespace nmprof::hotspot
