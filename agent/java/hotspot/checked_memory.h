// Reading VM memory that may not be what it seems. A plain load is made only from
// ranges known to be mapped (the thread's own stack above its sp, committed code
// heap memory holding a blob found through the heap's segment map); anything else
// is copied with process_vm_readv on this process, which fails with EFAULT where a
// load would fault, and costs a system call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmprof::hotspot {

struct AddressRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;

  // [address, address + size) lies inside.
  bool contains(uintptr_t address, size_t size) const {
    return address >= begin && address <= end && size <= end - address;
  }
};

// Copies [address, address + size) of this process's memory; false if any of it is
// unmapped or unreadable.
bool read_self(uintptr_t address, void* out, size_t size);

// The bytes of one object: read directly if `mapped`, otherwise through read_self,
// a window at a time so that nearby reads cost one system call between them.
class ObjectBytes {
 public:
  ObjectBytes(AddressRange object, bool mapped) : object_(object), mapped_(mapped) {}

  // All of [address, address + size) must lie in the object.
  bool read(uintptr_t address, void* out, size_t size);
  // Up to `size` bytes, fewer at the end of the object; how many were read.
  size_t read_some(uintptr_t address, void* out, size_t size);

 private:
  static constexpr size_t kWindow = 2048;

  AddressRange object_;
  bool mapped_;
  AddressRange window_;  // what `bytes_` holds
  alignas(8) unsigned char bytes_[kWindow];
};

}  // namespace nmprof::hotspot
