#include "agent/hooks/symbol_binding.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace nmprof {
namespace {

const void* own_code() { return reinterpret_cast<const void*>(&own_code); }

TEST(SymbolBinding, FindsWhereTheDynamicLinkerBindsAJumpSlot) {
  for (const char* name : {"malloc", "free", "realloc", "execve", "close"}) {
    SymbolBinding binding = symbol_binding(name, own_code());
    // The first definition in the global scope: libc's (the sanitizer's own, in the
    // ASan build, for the functions it replaces).
    EXPECT_EQ(binding.definition, dlsym(RTLD_DEFAULT, name)) << name;
    // This test is a PIE: it takes addresses through its GOT, never by a PLT entry.
    EXPECT_EQ(binding.canonical_entry, nullptr) << name;
  }
}

TEST(SymbolBinding, AModuleDefinesOnlyWhatItExportsAsAFunction) {
  void* library = dlopen(OWN_ALLOCATOR, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  link_map* map = nullptr;
  ASSERT_EQ(dlinfo(library, RTLD_DI_LINKMAP, &map), 0);
  EXPECT_EQ(function_defined_in(map->l_addr, map->l_ld, "malloc"), dlsym(library, "malloc"));
  EXPECT_EQ(function_defined_in(map->l_addr, map->l_ld, "own_allocator_calls"), nullptr);  // data
  EXPECT_EQ(function_defined_in(map->l_addr, map->l_ld, "calloc"), nullptr);               // not its own
  EXPECT_EQ(function_defined_in(map->l_addr, map->l_ld, "no_such_function"), nullptr);
  // Loaded after libc, locally: a jump slot elsewhere still binds to libc's malloc.
  EXPECT_NE(symbol_binding("malloc", own_code()).definition, dlsym(library, "malloc"));
  dlclose(library);
}

TEST(SymbolBinding, TheAgentsOwnModuleIsNeverTheAnswer) {
  // The library plays the agent: its own functions are not found in it.
  void* library = dlopen(OWN_ALLOCATOR, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  void* inside = dlsym(library, "own_allocator_allocate");
  EXPECT_EQ(symbol_binding("own_allocator_allocate", inside).definition, nullptr);
  EXPECT_EQ(symbol_binding("own_allocator_allocate", own_code()).definition, inside);
  dlclose(library);
}

}  // namespace
}  // namespace nmprof
