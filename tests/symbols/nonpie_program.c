// A non-PIE executable (load bias 0) that prints the runtime addresses of two of its functions.
#include <stdio.h>

int nonpie_global_function(int x) { return x + 1; }
static int nonpie_static_function(int x) { return x + 2; }

int main(void) {
  printf("%p %p\n", (void*)&nonpie_global_function, (void*)&nonpie_static_function);
  return 0;
}
