// Frames of the allocator itself (malloc and friends, their glibc internals, C++
// operator new/delete, profilers' hook functions) that some producers leave on top
// of allocation stacks. They say nothing about who allocated, so stacks start below them.
#pragma once

#include "formats/profile/profile.h"

namespace nmprof::profile {

bool is_allocator_frame(const Frame& frame);

}  // namespace nmprof::profile
