// Plugin number PLUGIN (set when compiling): plugin_fn_<PLUGIN> allocates
// PLUGIN * 1000 bytes. The copies differ only in names and sizes, so they have the
// same layout and may be loaded at the same address in turn.
#include <stdlib.h>

#define NAME2(a, b) a##b
#define NAME(a, b) NAME2(a, b)

void* volatile plugin_sink;

__attribute__((noinline)) void NAME(plugin_fn_, PLUGIN)(void) { plugin_sink = malloc(PLUGIN * 1000); }

void (*plugin_entry(void))(void) { return NAME(plugin_fn_, PLUGIN); }
