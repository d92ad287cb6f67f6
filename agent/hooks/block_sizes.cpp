#include "agent/hooks/block_sizes.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace nmprof {

std::atomic<BlockSizeFn> g_block_sizes[2][kMaxBindings];

namespace {

// The function `name` as the loaded object `object` defines it, looked up in its own
// dynamic symbol table through its hash table (DT_GNU_HASH, else DT_HASH): neither
// dlopen nor dlsym, which allocate from the host's heap (dlopen's bookkeeping, a
// failed lookup's message) and would search the object's dependencies too.
void* defined_in(const link_map& object, const char* name) {
  // glibc rewrites these to runtime addresses in place; a value below the base is not one yet.
  auto runtime = [&object](ElfW(Addr) value) { return value < object.l_addr ? value + object.l_addr : value; };
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t *gnu_hash = nullptr, *hash = nullptr;
  for (const ElfW(Dyn)* entry = object.l_ld; entry && entry->d_tag != DT_NULL; entry++) {
    if (entry->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(runtime(entry->d_un.d_ptr));
    if (entry->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(runtime(entry->d_un.d_ptr));
    if (entry->d_tag == DT_GNU_HASH) gnu_hash = reinterpret_cast<const uint32_t*>(runtime(entry->d_un.d_ptr));
    if (entry->d_tag == DT_HASH) hash = reinterpret_cast<const uint32_t*>(runtime(entry->d_un.d_ptr));
  }
  if (!symbols || !strings) return nullptr;
  auto function = [&](uint32_t index) -> void* {
    const ElfW(Sym)& symbol = symbols[index];
    bool defined = symbol.st_shndx != SHN_UNDEF && symbol.st_value != 0 && ELF64_ST_TYPE(symbol.st_info) == STT_FUNC;
    return defined && strcmp(strings + symbol.st_name, name) == 0
               ? reinterpret_cast<void*>(object.l_addr + symbol.st_value)
               : nullptr;
  };
  if (gnu_hash) {
    // nbuckets, symoffset, bloom words (64-bit), bloom shift; then bloom, buckets, chains.
    uint32_t buckets = gnu_hash[0], first = gnu_hash[1], bloom_words = gnu_hash[2];
    const uint32_t* bucket = gnu_hash + 4 + 2 * bloom_words;
    const uint32_t* chain = bucket + buckets;
    uint32_t h = 5381;
    for (const char* c = name; *c; c++) h = h * 33 + static_cast<unsigned char>(*c);
    if (buckets == 0) return nullptr;
    for (uint32_t i = bucket[h % buckets]; i >= first; i++) {
      uint32_t link = chain[i - first];
      if ((link | 1) == (h | 1))
        if (void* found = function(i)) return found;
      if (link & 1) break;  // the end of this bucket's chain
    }
    return nullptr;
  }
  if (!hash || hash[0] == 0) return nullptr;
  // nbucket, nchain; then buckets, chains.
  uint32_t h = 0;
  for (const char* c = name; *c; c++) {
    h = (h << 4) + static_cast<unsigned char>(*c);
    h = (h ^ ((h & 0xf0000000u) >> 24)) & 0x0fffffffu;
  }
  const uint32_t* bucket = hash + 2;
  const uint32_t* chain = bucket + hash[0];
  for (uint32_t i = bucket[h % hash[0]]; i != 0; i = chain[i])
    if (void* found = function(i)) return found;
  return nullptr;
}

// malloc_usable_size defined in the object that defines `target` (libc's would not
// say the size of a bundled allocator's blocks).
BlockSizeFn usable_size_beside(void* target) {
  Dl_info info;
  link_map* object = nullptr;
  if (!dladdr1(target, &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) || !object) return nullptr;
  return reinterpret_cast<BlockSizeFn>(defined_in(*object, "malloc_usable_size"));
}

// What a binding whose allocator has no malloc_usable_size gets: looked up once.
size_t size_unknown(void*) { return 0; }

}  // namespace

void learn_block_size(HookId id, int k, void* target) {
  if (id != kRealloc && id != kReallocarray) return;
  auto& slot = g_block_sizes[id == kReallocarray][k];
  if (slot.load(std::memory_order_acquire)) return;
  BlockSizeFn size = usable_size_beside(target);
  slot.store(size ? size : size_unknown, std::memory_order_release);
}

}  // namespace nmprof
