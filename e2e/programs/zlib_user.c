// Native memory allocated by zlib (built without frame pointers) on behalf of us.
#include <string.h>
#include <zlib.h>

__attribute__((noinline)) int compress_here(void) {
  z_stream s;
  memset(&s, 0, sizeof s);
  int rc = deflateInit2(&s, 9, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY);
  deflateEnd(&s);
  return rc;
}

int main(void) {
  int rc = 0;
  for (int i = 0; i < 20; i++) rc |= compress_here();
  return rc;
}
