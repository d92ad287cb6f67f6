// A library the test program loads with dlopen after it started.
#include <stdlib.h>
#include <string.h>

void* volatile plugin_sink[4];

__attribute__((noinline)) void plugin_allocate(void) {
  plugin_sink[0] = malloc(12345);
  plugin_sink[1] = strdup("from the plugin");
}
