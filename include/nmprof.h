/* nmprof.h: ties the native allocations of a thread to the request it is serving.
 *
 * Header only, nothing to link. The first call looks for the nmprof agent in the
 * process (nmprof run, LD_PRELOAD=libnmprof.so, java -agentpath:libnmprof.so);
 * without it, every call returns at once. With it, a call writes the calling
 * thread's context into memory the agent reads when it samples an allocation made
 * by that thread: no lock, no system call. Every profiler.Malloc event then carries
 * spanId, localRootSpanId and one field per declared attribute.
 *
 *   nmprof run --context-attributes route,tenant -- ./server
 *
 *   nmprof_context_set(span_id, local_root_span_id);
 *   nmprof_context_set_attribute("route", "/checkout");
 *   ... serve the request ...
 *   nmprof_context_clear();
 *
 * Attribute names must be declared up front (--context-attributes, or the agent
 * option attributes=NAME;NAME); a name that was not is ignored and counted in the
 * recording's statistics (undeclaredAttributes). Values are cut at 63 bytes.
 * The agent is looked up once per translation unit, at its first call: code that
 * runs before the agent is loaded into the process (nmprof attach) is not seen.
 * Needs dlsym from libc (glibc 2.34 or later; older glibc: link with -ldl).
 */
#ifndef NMPROF_H
#define NMPROF_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout below is shared with the agent; it changes only with this number. */
#define NMPROF_CONTEXT_ABI 1
#define NMPROF_MAX_ATTRIBUTES 8
#define NMPROF_ATTRIBUTE_SIZE 64 /* bytes of a name or a value, with its NUL */

/* The declared attribute names, one table per process, owned by the agent. */
struct nmprof_attribute_names {
  uint32_t count;
  char names[NMPROF_MAX_ATTRIBUTES][NMPROF_ATTRIBUTE_SIZE];
  uint64_t undeclared; /* nmprof_context_set_attribute calls with an undeclared name */
};

/* One thread's context, owned by the agent; only that thread writes or reads it. */
struct nmprof_context_block {
  uint64_t span_id;
  uint64_t local_root_span_id;
  struct nmprof_attribute_names *attributes;
  uint8_t value_length[NMPROF_MAX_ATTRIBUTES]; /* 0: no value */
  char values[NMPROF_MAX_ATTRIBUTES][NMPROF_ATTRIBUTE_SIZE];
};

/* The agent's one entry point for this API: the calling thread's block (made on its
 * first call), or NULL when the agent cannot give one for this ABI. Called once per
 * thread; the header keeps the block in a thread-local variable. */
typedef struct nmprof_context_block *(*nmprof_thread_context_fn)(int abi);

static inline struct nmprof_context_block *nmprof_no_agent__(int abi) {
  (void)abi;
  return NULL;
}

static inline struct nmprof_context_block *nmprof_context__(void) {
  /* The block stays valid as long as the process: the agent gives the block of an
   * exited thread to a new thread, never back to the allocator. */
  static __thread struct nmprof_context_block *block;
  static nmprof_thread_context_fn agent; /* NULL: not looked up yet */
  if (__builtin_expect(block != NULL, 1)) return block;
  nmprof_thread_context_fn fn = __atomic_load_n(&agent, __ATOMIC_RELAXED);
  if (__builtin_expect(fn == NULL, 0)) {
    /* RTLD_DEFAULT is NULL in glibc; it is only declared with _GNU_SOURCE. */
    void *found = dlsym((void *)0, "nmprof_thread_context");
    memcpy(&fn, &found, sizeof fn);
    if (fn == NULL) fn = nmprof_no_agent__;
    __atomic_store_n(&agent, fn, __ATOMIC_RELAXED);
  }
  if (fn == nmprof_no_agent__) return NULL;
  block = fn(NMPROF_CONTEXT_ABI);
  return block;
}

/* The span the thread works for now, and the root span of its request in this
 * process (0 for none). */
static inline void nmprof_context_set(uint64_t span_id, uint64_t local_root_span_id) {
  struct nmprof_context_block *c = nmprof_context__();
  if (c == NULL) return;
  c->span_id = span_id;
  c->local_root_span_id = local_root_span_id;
}

/* Sets one declared attribute of the thread's context; value NULL clears it. */
static inline void nmprof_context_set_attribute(const char *name, const char *value) {
  struct nmprof_context_block *c = nmprof_context__();
  if (c == NULL || name == NULL) return;
  struct nmprof_attribute_names *declared = c->attributes;
  for (uint32_t i = 0; i < declared->count && i < NMPROF_MAX_ATTRIBUTES; i++) {
    if (strcmp(declared->names[i], name) != 0) continue;
    size_t length = 0;
    if (value != NULL)
      for (; length < NMPROF_ATTRIBUTE_SIZE - 1 && value[length] != '\0'; length++) c->values[i][length] = value[length];
    c->value_length[i] = (uint8_t)length;
    return;
  }
  __atomic_fetch_add(&declared->undeclared, 1, __ATOMIC_RELAXED);
}

/* No span and no attributes: the thread serves no request. */
static inline void nmprof_context_clear(void) {
  struct nmprof_context_block *c = nmprof_context__();
  if (c == NULL) return;
  c->span_id = 0;
  c->local_root_span_id = 0;
  memset(c->value_length, 0, sizeof c->value_length);
}

#ifdef __cplusplus
}
#endif

#endif /* NMPROF_H */
