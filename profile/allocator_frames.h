// Frames of the allocator itself (malloc and friends, their glibc internals,
// profilers' hook functions) that some producers leave on top of allocation stacks.
// They say nothing about who allocated, so stacks start below them, even with
// --keep-frames. The wrappers that call them (C++ operator new, PHP's emalloc) are
// the program's view of allocation: those are folded (frame_folding.h), and
// --keep-frames shows them.
#pragma once

#include "profile/profile.h"

namespace nmprof::profile {

bool is_allocator_frame(const Frame& frame);

}  // namespace nmprof::profile
