// Plugin number PLUGIN (set when compiling): plugin_alloc returns a block of
// PLUGIN * 1000 bytes for its caller to free. The copies differ only in sizes, so
// they have the same layout and may be loaded at the same address in turn.
#include <stdlib.h>

__attribute__((noinline)) void* plugin_alloc(void) {
  void* block = malloc(PLUGIN * 1000);
  __asm__ volatile("" : : "r"(block) : "memory");  // no tail call: the frame stays on the stack
  return block;
}
