#include "agent/hooks/got_patcher.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "agent/sampling/sampler.h"

namespace nmprof {
namespace {

using AllocateFn = void* (*)(size_t);

// A call through a patched slot passes through a hook, which subtracts its size from
// this thread's countdown; an unpatched call leaves the countdown alone.
int64_t countdown_used_by(AllocateFn allocate, size_t size, void** result = nullptr) {
  int64_t before = t_state.bytes_until_sample;
  void* p = allocate(size);
  int64_t used = before - t_state.bytes_until_sample;
  if (result)
    *result = p;
  else
    free(p);
  return used;
}

class GotPatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Sampler::set_interval(uint64_t{1} << 40);  // count, never sample
    look_up_default_targets();
  }
  void SetUp() override {
    for (int id = 0; id <= kPvalloc; id++) patcher_.set_enabled(static_cast<HookId>(id), true);
    // A first hooked allocation seeds the countdown; afterwards it only counts down.
    t_state = ThreadState{};
    Sampler::seed(t_state);
    Sampler::restart(t_state);
  }
  void TearDown() override { patcher_.restore_all(); }

  void* open(const char* path, int flags = RTLD_NOW) {
    void* handle = dlopen(path, flags);
    EXPECT_NE(handle, nullptr) << dlerror();
    return handle;
  }
  template <typename Fn>
  Fn symbol(void* handle, const char* name) {
    auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
    EXPECT_NE(fn, nullptr) << name;
    return fn;
  }

  GotPatcher patcher_{reinterpret_cast<const void*>(&countdown_used_by)};
};

TEST_F(GotPatcherTest, PatchesPltGlobDatAndPointerTableSlots) {
  void* lib = open(PATCHEE);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  auto noplt = symbol<AllocateFn>(lib, "patchee_noplt_malloc");
  auto table = symbol<AllocateFn>(lib, "patchee_table_malloc");
  EXPECT_EQ(countdown_used_by(plt, 100), 0);
  EXPECT_EQ(countdown_used_by(noplt, 100), 0);

  EXPECT_GT(patcher_.patch_all(), 0u);
  EXPECT_EQ(countdown_used_by(plt, 100), 100);
  EXPECT_EQ(countdown_used_by(noplt, 200), 200);
  EXPECT_EQ(countdown_used_by(table, 300), 300);

  void* p = nullptr;
  countdown_used_by(plt, 4096, &p);
  memset(p, 0xab, 4096);  // real memory from the real malloc
  symbol<void (*)(void*)>(lib, "patchee_free")(p);
}

TEST_F(GotPatcherTest, PatchingTwiceChangesNothingAndRestoreUndoesIt) {
  void* lib = open(PATCHEE);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  EXPECT_GT(patcher_.patch_all(), 0u);
  EXPECT_EQ(patcher_.patch_all(), 0u);
  EXPECT_GT(patcher_.restore_all(), 0u);
  EXPECT_EQ(countdown_used_by(plt, 100), 0);
  EXPECT_EQ(patcher_.restore_all(), 0u);
}

// A pass skips the modules an earlier one patched; a module loaded where an unloaded
// one was is another module, and is patched.
TEST_F(GotPatcherTest, ALibraryLoadedWhereAnUnloadedOneWasIsPatched) {
  void* first = open(PATCHEE_FIRST);
  void* first_code = reinterpret_cast<void*>(symbol<AllocateFn>(first, "patchee_plt_malloc"));
  EXPECT_GT(patcher_.patch_all(), 0u);
  ASSERT_EQ(dlclose(first), 0);
  void* second = open(PATCHEE_SECOND);
  auto plt = symbol<AllocateFn>(second, "patchee_plt_malloc");
  ASSERT_EQ(reinterpret_cast<void*>(plt), first_code) << "the second library was loaded elsewhere";
  EXPECT_EQ(countdown_used_by(plt, 100), 0);
  EXPECT_GT(patcher_.patch_all(), 0u);
  EXPECT_EQ(countdown_used_by(plt, 100), 100);
}

TEST_F(GotPatcherTest, ModulesPatchedBeforeArePatchedAgainAfterARestore) {
  void* lib = open(PATCHEE);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  size_t patched = patcher_.patch_all();
  EXPECT_GT(patched, 0u);
  EXPECT_EQ(patcher_.restore_all(), patched);
  EXPECT_EQ(patcher_.patch_all(), patched);
  EXPECT_EQ(countdown_used_by(plt, 100), 100);
}

TEST_F(GotPatcherTest, AFunctionEnabledAfterAPassIsPatchedByTheNext) {
  void* lib = open(PATCHEE);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  patcher_.set_enabled(kMalloc, false);
  patcher_.patch_all();
  EXPECT_EQ(countdown_used_by(plt, 100), 0);
  patcher_.set_enabled(kMalloc, true);
  EXPECT_GT(patcher_.patch_all(), 0u);
  EXPECT_EQ(countdown_used_by(plt, 100), 100);
}

TEST_F(GotPatcherTest, BindsLazySlotsThatWereNeverCalled) {
  void* lib = open(PATCHEE_LAZY, RTLD_LAZY);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  patcher_.patch_all();
  void* p = nullptr;
  EXPECT_EQ(countdown_used_by(plt, 64, &p), 64);
  ASSERT_NE(p, nullptr);
  free(p);  // it came from the default malloc
}

TEST_F(GotPatcherTest, ASlotBoundToAnotherAllocatorKeepsReachingIt) {
  void* lib = open(OWN_ALLOCATOR, RTLD_NOW | RTLD_DEEPBIND);
  auto allocate = symbol<AllocateFn>(lib, "own_allocator_allocate");
  int* calls = symbol<int*>(lib, "own_allocator_calls");
  void* own_malloc = dlsym(lib, "malloc");
  ASSERT_NE(own_malloc, reinterpret_cast<void*>(&malloc));

  patcher_.patch_all();
  int before = *calls;
  void* p = nullptr;  // the library's own memory: not for libc's free
  EXPECT_EQ(countdown_used_by(allocate, 48, &p), 48);
  EXPECT_EQ(*calls, before + 1);
  bool bound = false;
  for (int k = 0; k < kMaxBindings; k++) bound |= g_hook_targets[kMalloc][k].load() == own_malloc;
  EXPECT_TRUE(bound);
}

TEST_F(GotPatcherTest, DisabledFunctionsAreNotPatched) {
  void* lib = open(PATCHEE);
  auto plt = symbol<AllocateFn>(lib, "patchee_plt_malloc");
  patcher_.set_enabled(kMalloc, false);
  patcher_.patch_all();
  EXPECT_EQ(countdown_used_by(plt, 100), 0);
}

TEST(HookTable, BindingIndexesAreStablePerTargetAndLimited) {
  static char targets[kMaxBindings + 1];
  int first = bind_target(kValloc, &targets[0]);
  ASSERT_GE(first, 0);
  EXPECT_EQ(bind_target(kValloc, &targets[0]), first);
  int taken = 0;
  for (int k = 0; k < kMaxBindings; k++) taken += g_hook_targets[kValloc][k].load() != nullptr;
  for (int i = 1; i <= kMaxBindings; i++) bind_target(kValloc, &targets[i]);
  EXPECT_EQ(bind_target(kValloc, &targets[kMaxBindings]), -1);
  EXPECT_GE(taken, 1);
}

TEST(HookTable, RecognizesItsEntryPoints) {
  HookId id;
  EXPECT_TRUE(is_hook_entry(g_hooked_functions[kCalloc].entries[2], &id));
  EXPECT_EQ(id, kCalloc);
  EXPECT_FALSE(is_hook_entry(reinterpret_cast<void*>(&malloc)));
}

}  // namespace
}  // namespace nmprof
