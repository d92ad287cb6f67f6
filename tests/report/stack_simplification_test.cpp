// Stacks as reports show them: Java tiers merged, allocator wrappers and runtime
// plumbing folded, nmprof's own frames dropped (issue 17, items 1, 2 and 4).
#include <gtest/gtest.h>

#include <regex>

#include "profile/frame_folding.h"
#include "profile/stack_simplification.h"
#include "tests/report/profile_maker.h"

namespace nmprof::profile {
namespace {

using report::testing::ProfileMaker;

Frame java(const std::string& klass, const std::string& method, FrameKind kind, int line) {
  return {method, klass, kind, line, {}};
}

Frame native(const std::string& function, const std::string& library = "libjvm.so") {
  return {function, library, FrameKind::Native, -1, {}};
}

uint32_t stack_of(ProfileMaker& m, const std::vector<Frame>& frames) {
  Stack s;
  for (const auto& f : frames) s.frames.push_back(m.profile.add_frame(f));
  return m.profile.add_stack(s);
}

std::vector<std::string> functions(const Profile& p, uint32_t stack) {
  std::vector<std::string> names;
  for (uint32_t f : p.stacks()[stack].frames) names.push_back(p.frames()[f].function);
  return names;
}

// The direct-buffer leak as JDK 17 recorded it: one path in three tiers.
ProfileMaker direct_buffer_leak() {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 1000);
  auto path = [&](FrameKind tier) {
    return stack_of(m, {native("os::malloc(unsigned long, MEMFLAGS)"), native("Unsafe_AllocateMemory0"),
                        java("jdk.internal.misc.Unsafe", "allocateMemory0", FrameKind::JavaNative, -1),
                        java("java.nio.DirectByteBuffer", "<init>", tier, 121),
                        java("java.nio.ByteBuffer", "allocateDirect", tier, 332),
                        java("Leak", "grow", FrameKind::Interpreted, 7)});
  };
  m.alloc(p, path(FrameKind::JitCompiled), 10, 0x1000, 40 << 20);
  m.alloc(p, path(FrameKind::Interpreted), 20, 0x2000, 11 << 20);
  m.alloc(p, path(FrameKind::Inlined), 30, 0x3000, 10 << 20);
  return m;
}

TEST(StackSimplification, OneJavaPathRunInThreeTiersIsOneStack) {
  ProfileMaker m = direct_buffer_leak();
  simplify_stacks(m.profile, {});
  const auto& a = m.profile.allocations();
  EXPECT_EQ(a[0].stack, a[1].stack);
  EXPECT_EQ(a[0].stack, a[2].stack);
  for (uint32_t f : m.profile.stacks()[a[0].stack].frames)
    EXPECT_NE(m.profile.frames()[f].kind, FrameKind::JitCompiled);
}

TEST(StackSimplification, FrameTypesKeepsTheTiersApart) {
  ProfileMaker m = direct_buffer_leak();
  StackSimplification how;
  how.merge_java_frame_types = false;
  simplify_stacks(m.profile, how);
  EXPECT_NE(m.profile.allocations()[0].stack, m.profile.allocations()[1].stack);
  EXPECT_NE(m.profile.allocations()[1].stack, m.profile.allocations()[2].stack);
}

TEST(StackSimplification, AllocatorWrappersAndJniGlueAreFoldedSoTheJavaMethodComesFirst) {
  ProfileMaker m = direct_buffer_leak();
  simplify_stacks(m.profile, {});
  auto names = functions(m.profile, m.profile.allocations()[0].stack);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "allocateMemory0");
  EXPECT_EQ(names.size(), 4u);
}

TEST(StackSimplification, KeepFramesShowsThemAndFoldAddsTheUsersOwn) {
  ProfileMaker m = direct_buffer_leak();
  StackSimplification keep;
  keep.fold_defaults = false;
  simplify_stacks(m.profile, keep);
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[0].stack)[0], "os::malloc(unsigned long, MEMFLAGS)");

  ProfileMaker folded = direct_buffer_leak();
  StackSimplification more;
  more.fold_patterns = {"^jdk\\.internal\\.", "^java\\.nio\\."};
  simplify_stacks(folded.profile, more);
  EXPECT_EQ(functions(folded.profile, folded.profile.allocations()[0].stack), std::vector<std::string>{"grow"});
}

TEST(StackSimplification, ZlibAndCxxLibraryInternalsAreFolded) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 1000);
  uint32_t zip = stack_of(m, {native("deflateInit2_", "libz.so.1"), native("Java_java_util_zip_Deflater_init", "libzip.so"),
                              java("java.util.zip.Deflater", "init", FrameKind::JavaNative, -1),
                              java("App", "deflate", FrameKind::JitCompiled, 12)});
  uint32_t text = stack_of(m, {native("operator new(unsigned long)", "libstdc++.so.6"),
                               native("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
                                      ">::_M_mutate(unsigned long, unsigned long, char const*, unsigned long)",
                                      "libstdc++.so.6"),
                               native("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(int&&)",
                                      "app"),
                               native("parse_config(char const*)", "app"), native("main", "app")});
  m.alloc(p, zip, 1, 0x10, 100);
  m.alloc(p, text, 2, 0x20, 100);
  simplify_stacks(m.profile, {});
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[0].stack)[0], "init");
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[1].stack),
            (std::vector<std::string>{"parse_config(char const*)", "main"}));
}

// Rust's Vec and allocator code, inlined into the caller, is frames of its own on top.
TEST(StackSimplification, RustStandardLibraryInternalsAreFolded) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 1000);
  uint32_t vec = stack_of(m, {native("<alloc::alloc::Global>::alloc_impl"),
                              native("<alloc::alloc::Global as core::alloc::Allocator>::allocate"),
                              native("alloc::raw_vec::RawVecInner<A>::try_allocate_in"),
                              native("alloc::vec::Vec<T>::with_capacity"), native("core::iter::traits::iterator::Iterator::collect"),
                              native("app::load"), native("core::ops::function::FnOnce::call_once"), native("main")});
  m.alloc(p, vec, 1, 0x10, 100);
  simplify_stacks(m.profile, {});
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[0].stack),
            (std::vector<std::string>{"app::load", "core::ops::function::FnOnce::call_once", "main"}));
}

TEST(StackSimplification, OnlyFramesOnTopAreFoldedAndAStackOfWrappersKeepsItsLast) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 1000);
  uint32_t inner = stack_of(m, {native("my_alloc", "app"), native("std::function<void ()>::operator()() const", "app"),
                                native("main", "app")});
  uint32_t only = stack_of(m, {native("os::malloc(unsigned long)"), native("AllocateHeap(unsigned long)")});
  m.alloc(p, inner, 1, 0x10, 100);
  m.alloc(p, only, 2, 0x20, 100);
  simplify_stacks(m.profile, {});
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[0].stack).size(), 3u);
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[1].stack),
            std::vector<std::string>{"AllocateHeap(unsigned long)"});
}

TEST(StackSimplification, NmprofsOwnFramesAreDroppedAnywhere) {
  ProfileMaker m;
  uint32_t p = m.process(1, 0, 1000);
  uint32_t start = stack_of(m, {native("Threads::create_vm(JavaVMInitArgs*, bool*)"), native("JNI_CreateJavaVM"),
                                native("nmprof::(anonymous namespace)::create_java_vm_with_agent(JavaVM_**, void**, void*)",
                                       "libnmprof.so"),
                                native("JavaMain", "libjli.so")});
  m.alloc(p, start, 1, 0x10, 100);
  StackSimplification keep;
  keep.fold_defaults = false;
  simplify_stacks(m.profile, keep);
  EXPECT_EQ(functions(m.profile, m.profile.allocations()[0].stack),
            (std::vector<std::string>{"Threads::create_vm(JavaVMInitArgs*, bool*)", "JNI_CreateJavaVM", "JavaMain"}));
}

TEST(FrameFolding, RulesMatchNamesWithoutTheirReturnType) {
  EXPECT_EQ(fold_name(native("void std::vector<int>::_M_insert<int>(int&&)")), "std::vector<int>::_M_insert<int>(int&&)");
  EXPECT_EQ(fold_name(native("operator new(unsigned long)")), "operator new(unsigned long)");
  EXPECT_EQ(fold_name(native("my::f<std::pair<int, std::string> >(int)")), "my::f<std::pair<int, std::string> >(int)");
  EXPECT_EQ(fold_name(java("com.x.A", "run", FrameKind::Java, 3)), "com.x.A.run");
  FrameFolder folder(true, {});
  EXPECT_FALSE(folder.folds(native("my::f<std::pair<int, std::string> >(int)")));
  EXPECT_FALSE(folder.folds(java("std", "x", FrameKind::Java, 1)));  // defaults never fold Java frames
  EXPECT_TRUE(folder.folds(native("ResourceObj::operator new(unsigned long, MEMFLAGS)")));
  EXPECT_TRUE(folder.folds(native("CHeapObj<(MEMFLAGS)5>::operator new(unsigned long)")));
  EXPECT_FALSE(folder.folds(native("Parser::operator newline_count()")));
  EXPECT_THROW(FrameFolder(false, {"("}), std::regex_error);
}

}  // namespace
}  // namespace nmprof::profile
