/* A JVMTI agent for the attach tests. Options: "rc=<n>,out=<path>[,<anything>]".
 * Agent_OnAttach appends the whole option string and a newline to <path> and
 * returns <n>, so a test sees exactly what reached the agent and what it answered. */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of "<key>=" at the start of `options` or after a comma, copied to `out`. */
static int option(const char* options, const char* key, char* out, size_t size) {
  size_t key_length = strlen(key);
  for (const char* p = options; p; p = strchr(p, ',')) {
    if (*p == ',') p++;
    if (strncmp(p, key, key_length) == 0 && p[key_length] == '=') {
      const char* value = p + key_length + 1;
      size_t length = strcspn(value, ",");
      if (length >= size) return 0;
      memcpy(out, value, length);
      out[length] = '\0';
      return 1;
    }
  }
  return 0;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void* reserved) {
  (void)vm;
  (void)reserved;
  char rc[32];
  char path[4096];
  if (!options || !option(options, "rc", rc, sizeof rc) || !option(options, "out", path, sizeof path)) return 99;
  FILE* out = fopen(path, "a");
  if (!out) return 98;
  fprintf(out, "%s\n", options);
  fclose(out);
  return atoi(rc);
}
