// The per-thread context of nmprof.h: span ids and attribute values that a thread's
// code writes into its own block and the sampled path of the same thread reads.
// Blocks are made on a thread's first call; when it exits, its block goes to a new
// thread once the old one is gone (nmprof.h may still hold it: blocks are never freed).
#pragma once

#include <string>
#include <vector>

#include "include/nmprof.h"

namespace nmprof {

// The attribute names of the recording being started (at most NMPROF_MAX_ATTRIBUTES).
void declare_context_attributes(const std::vector<std::string>& names);
// The slot of a declared attribute name, or -1 (and the name is counted as undeclared).
int declared_attribute_index(const char* name);
// How often a thread set an attribute that was not declared.
uint64_t undeclared_context_attributes();
// The calling thread's block, made now if it has none; null if out of memory.
nmprof_context_block* context_of_this_thread();
// In a child after fork(): the thread that held the lock of the spare blocks is gone.
void reset_context_lock_after_fork();

}  // namespace nmprof
