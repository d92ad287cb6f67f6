// A second profiler, as async-profiler's native-memory tracer works: when loaded, it
// rewrites the malloc, calloc, realloc and free GOT slots of every loaded library to
// hooks that count calls and forward to one original per function: the first bound
// slot's target (nmprof's hook when nmprof came first), else the dynamic linker's
// answer. At exit it prints its count. Loaded with LD_PRELOAD (before nmprof),
// dlopen'd by the program (after), or as a JVM agent (-agentpath, before or after
// nmprof's).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void* (*malloc_fn)(size_t);
typedef void* (*calloc_fn)(size_t, size_t);
typedef void* (*realloc_fn)(void*, size_t);
typedef void (*free_fn)(void*);

static malloc_fn original_malloc;
static calloc_fn original_calloc;
static realloc_fn original_realloc;
static free_fn original_free;
static atomic_long calls;

static void* traced_malloc(size_t size) {
  atomic_fetch_add(&calls, 1);
  return original_malloc(size);
}
static void* traced_calloc(size_t n, size_t size) {
  atomic_fetch_add(&calls, 1);
  return original_calloc(n, size);
}
static void* traced_realloc(void* p, size_t size) {
  atomic_fetch_add(&calls, 1);
  return original_realloc(p, size);
}
static void traced_free(void* p) {
  atomic_fetch_add(&calls, 1);
  original_free(p);
}

struct hook {
  const char* name;
  void* replacement;
  void** original;
};
static struct hook hooks[] = {
    {"malloc", (void*)traced_malloc, (void**)&original_malloc},
    {"calloc", (void*)traced_calloc, (void**)&original_calloc},
    {"realloc", (void*)traced_realloc, (void**)&original_realloc},
    {"free", (void*)traced_free, (void**)&original_free},
};

// First pass: find the originals; second pass: patch.
static int patching;

// A lazily bound slot still points into its own module's PLT.
static int bound(void** slot) {
  Dl_info where_slot, where_target;
  return dladdr(slot, &where_slot) && dladdr(*slot, &where_target) && where_slot.dli_fbase != where_target.dli_fbase;
}

static void patch_slot(void** slot, const char* name) {
  for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
    if (strcmp(name, hooks[i].name) != 0 || *slot == hooks[i].replacement) continue;
    if (!patching) {
      if (!*hooks[i].original && bound(slot)) *hooks[i].original = *slot;
      continue;
    }
    uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(getpagesize() - 1);
    mprotect((void*)page, getpagesize(), PROT_READ | PROT_WRITE);  // RELRO
    *slot = hooks[i].replacement;
  }
}

static void patch_relocations(uintptr_t base, const ElfW(Rela)* rela, size_t bytes, const ElfW(Sym)* symbols,
                              const char* names) {
  for (size_t i = 0; i < bytes / sizeof *rela; i++) {
    unsigned type = ELF64_R_TYPE(rela[i].r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
    patch_slot((void**)(base + rela[i].r_offset), names + symbols[ELF64_R_SYM(rela[i].r_info)].st_name);
  }
}

static int patch_module(struct dl_phdr_info* info, size_t size, void* self) {
  (void)size;
  if (strstr(info->dlpi_name, "linux-vdso") || strstr(info->dlpi_name, "/ld-linux")) return 0;
  Dl_info own;
  const ElfW(Dyn)* dynamic = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dynamic = (const void*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dynamic || (dladdr(self, &own) && own.dli_fbase == (void*)info->dlpi_addr)) return 0;
  const ElfW(Sym)* symbols = NULL;
  const char* names = NULL;
  const ElfW(Rela)*plt = NULL, *rela = NULL;
  size_t plt_bytes = 0, rela_bytes = 0;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_SYMTAB) symbols = (const void*)d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB) names = (const void*)d->d_un.d_ptr;
    if (d->d_tag == DT_JMPREL) plt = (const void*)d->d_un.d_ptr;
    if (d->d_tag == DT_PLTRELSZ) plt_bytes = d->d_un.d_val;
    if (d->d_tag == DT_RELA) rela = (const void*)d->d_un.d_ptr;
    if (d->d_tag == DT_RELASZ) rela_bytes = d->d_un.d_val;
  }
  if (!symbols || !names) return 0;
  if (plt) patch_relocations(info->dlpi_addr, plt, plt_bytes, symbols, names);
  if (rela) patch_relocations(info->dlpi_addr, rela, rela_bytes, symbols, names);
  return 0;
}

__attribute__((constructor)) static void start_tracing(void) {
  dl_iterate_phdr(patch_module, (void*)start_tracing);
  for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
    if (!*hooks[i].original) *hooks[i].original = dlsym(RTLD_DEFAULT, hooks[i].name);
  patching = 1;
  dl_iterate_phdr(patch_module, (void*)start_tracing);
}

// A JVM agent needs nothing more than to say it started: the constructor patched.
int Agent_OnLoad(void* vm, char* options, void* reserved) {
  (void)vm, (void)options, (void)reserved;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "got_tracer: %ld calls\n", atomic_load(&calls));
}
