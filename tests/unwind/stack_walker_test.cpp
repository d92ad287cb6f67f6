// Real walks of this thread's stack, through code that only CFI describes (the
// omit-fp library, libc, libz, hand-written CFI) and code that only frame pointers do.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <csetjmp>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/unwind/registers.h"
#include "agent/unwind/stack_walker.h"
#include "tests/unwind/loaded_modules.h"
#include "tests/unwind/test_chains.h"
#include "tests/unwind/thread_stack.h"

using namespace nmprof::unwind;
using nmprof::unwind::test::LoadedModules;
using nmprof::unwind::test::thread_stack_end;

namespace {

struct RecordedWalk {
  static constexpr size_t kMaxFrames = 128;
  size_t max_frames = kMaxFrames;
  uintptr_t frames[kMaxFrames] = {};
  StackWalk walk;
  FirstPc first_pc = FirstPc::kExact;
  bool done = false;

  // dladdr's name for each frame (the calling instruction for return addresses).
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (size_t i = 0; i < walk.depth; ++i) {
      Dl_info info{};
      bool exact = i == 0 && first_pc == FirstPc::kExact;
      bool found = dladdr(reinterpret_cast<void*>(exact ? frames[i] : frames[i] - 1), &info) && info.dli_sname;
      result.push_back(found ? info.dli_sname : "?");
    }
    return result;
  }
  std::string module_of(size_t frame) const {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(frames[frame] - 1), &info) && info.dli_fname ? info.dli_fname : "";
  }
};

// Starts the walk in its own frame, so frame 0 is always record_walk.
extern "C" __attribute__((noinline)) int record_walk(void* context) {
  auto* record = static_cast<RecordedWalk*>(context);
  if (record->done) return 0;
  record->done = true;
  Registers registers = current_registers();
  record->walk = walk_stack(registers, thread_stack_end(), LoadedModules::instance(),
                            std::span(record->frames, record->max_frames));
  return 0;
}

std::vector<std::string> first(const std::vector<std::string>& names, size_t count) {
  return std::vector<std::string>(names.begin(), names.begin() + std::min(count, names.size()));
}

}  // namespace

// The functions the walks must find as callers. Exported (ENABLE_EXPORTS) for dladdr;
// the "+ 1" keeps each call a call, not a tail jump.
extern "C" {
__attribute__((noinline)) int walk_through_omit_fp_chain(RecordedWalk* record) {
  return omit_fp_chain_a(record_walk, record) + 1;
}
__attribute__((noinline)) int walk_through_fp_chain(RecordedWalk* record) {
  return fp_chain_a(record_walk, record) + 1;
}
__attribute__((noinline)) int enter_omit_fp_chain(void* record) { return omit_fp_chain_a(record_walk, record) + 1; }
__attribute__((noinline)) int walk_through_both_chains(RecordedWalk* record) {
  return fp_chain_a(enter_omit_fp_chain, record) + 1;
}
__attribute__((noinline)) int walk_through_cfi_ops(int (*function)(UnwindTestCallback, void*), RecordedWalk* record) {
  return function(record_walk, record) + 1;
}

RecordedWalk* qsort_record;
__attribute__((noinline)) int compare_and_walk(const void* left, const void* right) {
  record_walk(qsort_record);
  return *static_cast<const int*>(left) - *static_cast<const int*>(right);
}
__attribute__((noinline)) int walk_through_qsort(RecordedWalk* record) {
  qsort_record = record;
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  qsort(values, 64, sizeof(int), compare_and_walk);
  return values[0] + 1;
}

__attribute__((noinline)) voidpf allocate_and_walk(voidpf record, uInt items, uInt size) {
  record_walk(record);
  return calloc(items, size);
}
__attribute__((noinline)) int walk_through_deflate_init(RecordedWalk* record) {
  z_stream stream{};
  stream.zalloc = allocate_and_walk;
  stream.zfree = [](voidpf, voidpf address) { free(address); };
  stream.opaque = record;
  int status = deflateInit2(&stream, 6, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
  deflateEnd(&stream);
  return status + 1;
}
}

TEST(StackWalker, FollowsCfiThroughCodeWithoutFramePointers) {
  RecordedWalk record;
  walk_through_omit_fp_chain(&record);
  EXPECT_EQ(first(record.names(), 6),
            (std::vector<std::string>{"record_walk", "omit_fp_chain_d", "omit_fp_chain_c", "omit_fp_chain_b",
                                      "omit_fp_chain_a", "walk_through_omit_fp_chain"}));
  // All the way through gtest and main to _start, whose CFI ends the stack.
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
  EXPECT_FALSE(record.walk.truncated());
}

TEST(StackWalker, FollowsCfiThroughLibcWithoutFramePointers) {
  RecordedWalk record;
  walk_through_qsort(&record);
  std::vector<std::string> names = record.names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "record_walk");
  EXPECT_EQ(names[1], "compare_and_walk");
  size_t frame = 2;
  while (frame < record.walk.depth && record.module_of(frame).ends_with("/libc.so.6")) ++frame;
  EXPECT_GE(frame, 3u) << "no libc frame between the comparator and its caller";
  ASSERT_LT(frame, names.size());
  EXPECT_EQ(names[frame], "walk_through_qsort");
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, FollowsCfiThroughLibz) {
  RecordedWalk record;
  walk_through_deflate_init(&record);
  std::vector<std::string> names = record.names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(first(names, 4),
            (std::vector<std::string>{"record_walk", "allocate_and_walk", "deflateInit2_", "walk_through_deflate_init"}));
  EXPECT_TRUE(record.module_of(2).ends_with("/libz.so.1")) << record.module_of(2);
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, FallsBackToFramePointersWhereThereIsNoCfi) {
  // The library really has no rows for these functions, entry or middle.
  const LoadedModules& modules = LoadedModules::instance();
  for (auto function : {fp_chain_a, fp_chain_b, fp_chain_c}) {
    auto pc = reinterpret_cast<uintptr_t>(function);
    const FrameTable* table = modules.table_for(pc);
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->find(pc), nullptr);
    EXPECT_EQ(table->find(pc + 4), nullptr);
  }

  RecordedWalk record;
  walk_through_fp_chain(&record);
  EXPECT_EQ(first(record.names(), 5), (std::vector<std::string>{"record_walk", "fp_chain_c", "fp_chain_b",
                                                                "fp_chain_a", "walk_through_fp_chain"}));
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, CfiRestoresTheRbpThatFramePointerCodeFurtherOutNeeds) {
  // omit_fp_chain_b zeroes rbp; the fp-only frames beyond are found only if its CFI
  // gives the saved rbp back.
  RecordedWalk record;
  walk_through_both_chains(&record);
  EXPECT_EQ(first(record.names(), 10),
            (std::vector<std::string>{"record_walk", "omit_fp_chain_d", "omit_fp_chain_c", "omit_fp_chain_b",
                                      "omit_fp_chain_a", "enter_omit_fp_chain", "fp_chain_c", "fp_chain_b",
                                      "fp_chain_a", "walk_through_both_chains"}));
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, FollowsHandWrittenCfi) {
  struct Frame {
    int (*function)(UnwindTestCallback, void*);
    const char* name;
  };
  for (auto [function, name] : {Frame{cfi_ops_rbp_frame, "cfi_ops_rbp_frame"},
                                Frame{cfi_ops_signed_offsets, "cfi_ops_signed_offsets"},
                                Frame{cfi_ops_cfa_expression, "cfi_ops_cfa_expression"}}) {
    RecordedWalk record;
    walk_through_cfi_ops(function, &record);
    EXPECT_EQ(first(record.names(), 3), (std::vector<std::string>{"record_walk", name, "walk_through_cfi_ops"}));
    EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack) << name;
  }
}

std::jmp_buf escape_walk;
extern "C" __attribute__((noinline)) int record_walk_and_escape(void* record) {
  record_walk(record);
  std::longjmp(escape_walk, 1);
}

extern "C" __attribute__((noinline)) int walk_through_call_at_end(RecordedWalk* record) {
  if (setjmp(escape_walk) == 0) cfi_ops_call_at_end(record_walk_and_escape, record);
  return 1;
}

TEST(StackWalker, LooksUpReturnAddressesOneByteBack) {
  RecordedWalk record;
  walk_through_call_at_end(&record);
  EXPECT_EQ(first(record.names(), 4), (std::vector<std::string>{"record_walk", "record_walk_and_escape",
                                                                "cfi_ops_call_at_end", "walk_through_call_at_end"}));
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, StopsAtAFrameMarkedOutermost) {
  RecordedWalk record;
  walk_through_cfi_ops(cfi_ops_outermost, &record);
  EXPECT_EQ(record.names(), (std::vector<std::string>{"record_walk", "cfi_ops_outermost"}));
  EXPECT_EQ(record.walk.stop, WalkStop::kEndOfStack);
}

TEST(StackWalker, DepthLimitGivesExactlyThatManyFramesAndSaysSo) {
  RecordedWalk full;
  walk_through_omit_fp_chain(&full);
  ASSERT_EQ(full.walk.stop, WalkStop::kEndOfStack);
  ASSERT_GT(full.walk.depth, 6u);

  RecordedWalk limited;
  limited.max_frames = 3;
  walk_through_omit_fp_chain(&limited);
  EXPECT_EQ(limited.walk.depth, 3u);
  EXPECT_TRUE(limited.walk.truncated());
  EXPECT_EQ(limited.walk.stop, WalkStop::kDepthLimit);
  EXPECT_EQ(limited.walk.stopped_at.pc, full.frames[3]);  // where a continued walk would start
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(limited.frames[i], full.frames[i]);

  // A limit the stack just fits is not a truncation.
  RecordedWalk exact;
  exact.max_frames = full.walk.depth;
  walk_through_omit_fp_chain(&exact);
  EXPECT_EQ(exact.walk.depth, full.walk.depth);
  EXPECT_EQ(exact.walk.stop, WalkStop::kEndOfStack);
}

struct TwoPartWalk {
  RecordedWalk head;
  RecordedWalk rest;
};
// Walks two frames (record_walk and this), then continues from where that stopped.
extern "C" __attribute__((noinline)) int walk_in_two_parts(void* raw) {
  auto* walks = static_cast<TwoPartWalk*>(raw);
  walks->head.max_frames = 2;
  record_walk(&walks->head);
  walks->rest.first_pc = FirstPc::kReturnAddress;
  walks->rest.walk = walk_stack(walks->head.walk.stopped_at, thread_stack_end(), LoadedModules::instance(),
                                std::span(walks->rest.frames, RecordedWalk::kMaxFrames), FirstPc::kReturnAddress);
  return 0;
}

TEST(StackWalker, ContinuesFromWhereADepthLimitStopped) {
  TwoPartWalk walks;
  omit_fp_chain_a(walk_in_two_parts, &walks);
  ASSERT_EQ(walks.head.walk.stop, WalkStop::kDepthLimit);
  EXPECT_EQ(walks.head.names(), (std::vector<std::string>{"record_walk", "walk_in_two_parts"}));
  EXPECT_EQ(first(walks.rest.names(), 4),
            (std::vector<std::string>{"omit_fp_chain_d", "omit_fp_chain_c", "omit_fp_chain_b", "omit_fp_chain_a"}));
  EXPECT_EQ(walks.rest.walk.stop, WalkStop::kEndOfStack);
}
