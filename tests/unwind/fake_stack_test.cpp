// Walks over stacks built by hand in a fenced region: any read outside the region
// faults, so these tests also prove the walker stays inside [sp, stack_end).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>

#include "agent/unwind/stack_walker.h"
#include "tests/unwind/loaded_modules.h"
#include "tests/unwind/readelf_oracle.h"
#include "tests/unwind/test_chains.h"

using namespace nmprof::unwind;
using nmprof::unwind::test::LoadedModules;

namespace {

// Stack words between two inaccessible pages.
class FakeStack {
 public:
  static constexpr size_t kWords = 1024;

  FakeStack() : page_(sysconf(_SC_PAGESIZE)) {
    size_t inner = (kWords * 8 + page_ - 1) / page_ * page_;
    total_ = inner + 2 * page_;
    void* area = mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    area_ = area == MAP_FAILED ? nullptr : static_cast<uint8_t*>(area);
    if (area_) mprotect(area_ + page_, inner, PROT_READ | PROT_WRITE);
    // The words end exactly at the upper fence.
    words_ = area_ ? reinterpret_cast<uintptr_t*>(area_ + page_ + inner) - kWords : nullptr;
  }
  ~FakeStack() {
    if (area_) munmap(area_, total_);
  }

  bool ok() const { return area_ != nullptr; }
  uintptr_t& operator[](size_t index) { return words_[index]; }
  uintptr_t address(size_t index) const { return reinterpret_cast<uintptr_t>(words_ + index); }
  uintptr_t begin() const { return address(0); }
  uintptr_t end() const { return address(kWords); }

 private:
  size_t page_;
  size_t total_ = 0;
  uint8_t* area_ = nullptr;
  uintptr_t* words_ = nullptr;
};

struct Walk {
  uintptr_t frames[64] = {};
  StackWalk result;
};

Walk walk(const Registers& start, const FakeStack& stack, size_t max_frames = 64) {
  Walk walk;
  walk.result = walk_stack(start, stack.end(), LoadedModules::instance(), std::span(walk.frames, max_frames));
  return walk;
}

uintptr_t address_of(int (*function)(UnwindTestCallback, void*)) { return reinterpret_cast<uintptr_t>(function); }

// A pc in the frame-pointer-only library, where the walker must use rbp.
uintptr_t no_cfi_pc() { return address_of(fp_chain_b) + 4; }

}  // namespace

TEST(FakeStack, GarbageFramePointerEndsTheWalk) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  for (uintptr_t fp : {uintptr_t{0xdeadbeef}, stack.begin() + 3, stack.begin() - 8, stack.begin() - 4096,
                       stack.end(), stack.end() - 8, UINTPTR_MAX - 7, uintptr_t{8}}) {
    Walk result = walk(Registers{no_cfi_pc(), stack.begin(), fp}, stack);
    EXPECT_EQ(result.result.depth, 1u) << std::hex << fp;
    EXPECT_EQ(result.result.stop, WalkStop::kBadFrame) << std::hex << fp;
  }
  // rbp 0 is how the outermost frame-pointer frame says it is the last.
  EXPECT_EQ(walk(Registers{no_cfi_pc(), stack.begin(), 0}, stack).result.stop, WalkStop::kEndOfStack);
}

TEST(FakeStack, FramePointerChainThatLoopsEnds) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  // Frame at word 10 names itself as its caller's frame.
  stack[10] = stack.address(10);
  stack[11] = no_cfi_pc();
  Walk self = walk(Registers{no_cfi_pc(), stack.begin(), stack.address(10)}, stack);
  EXPECT_EQ(self.result.stop, WalkStop::kBadFrame);
  EXPECT_EQ(self.result.depth, 2u);

  // Two frames naming each other.
  stack[20] = stack.address(30), stack[21] = no_cfi_pc();
  stack[30] = stack.address(20), stack[31] = no_cfi_pc();
  Walk pair = walk(Registers{no_cfi_pc(), stack.begin(), stack.address(20)}, stack);
  EXPECT_EQ(pair.result.stop, WalkStop::kBadFrame);
  EXPECT_EQ(pair.result.depth, 3u);
}

TEST(FakeStack, FramePointerChainWalksAndEnds) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  uintptr_t callers[3] = {address_of(fp_chain_a) + 9, address_of(fp_chain_b) + 9, address_of(fp_chain_c) + 9};
  stack[4] = stack.address(8), stack[5] = callers[0];
  stack[8] = stack.address(16), stack[9] = callers[1];
  stack[16] = 0, stack[17] = callers[2];
  Walk result = walk(Registers{no_cfi_pc(), stack.begin(), stack.address(4)}, stack);
  EXPECT_EQ(result.result.stop, WalkStop::kEndOfStack);
  ASSERT_EQ(result.result.depth, 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(result.frames[i + 1], callers[i]);
}

TEST(FakeStack, CorruptReturnAddressStopsAsUnknownCodeWithItsRegisters) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  // At a function's first instruction the return address is at [rsp].
  stack[0] = 0x1234;
  Walk result = walk(Registers{address_of(omit_fp_chain_d), stack.begin(), 0x5678}, stack);
  EXPECT_EQ(result.result.stop, WalkStop::kUnknownCode);
  EXPECT_EQ(result.result.depth, 1u);
  EXPECT_EQ(result.result.stopped_at.pc, 0x1234u);
  EXPECT_EQ(result.result.stopped_at.sp, stack.address(1));
  EXPECT_EQ(result.result.stopped_at.fp, 0x5678u);  // rbp untouched by the callee
}

TEST(FakeStack, CfaOutsideTheStackIsABadFrame) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  // sp at the very end: the return address would be past it.
  EXPECT_EQ(walk(Registers{address_of(omit_fp_chain_d), stack.end(), 0}, stack).result.stop, WalkStop::kBadFrame);
  EXPECT_EQ(walk(Registers{address_of(omit_fp_chain_d), stack.end() - 4, 0}, stack).result.stop,
            WalkStop::kBadFrame);
  // An rbp-based CFA with a garbage rbp (cfi_ops_rbp_frame after its mov %rsp, %rbp).
  for (uintptr_t fp : {uintptr_t{0}, stack.begin() - 64, stack.end(), uintptr_t{0x7fff0000}}) {
    Walk result = walk(Registers{address_of(cfi_ops_rbp_frame) + 4, stack.begin(), fp}, stack);
    EXPECT_EQ(result.result.stop, WalkStop::kBadFrame) << std::hex << fp;
  }
  // A saved-rbp slot outside the stack: omit_fp_chain_b after its push %rbp keeps rbp
  // at CFA - 16 = sp, but start sp at the top word so CFA - 8 is past the end.
  Walk result = walk(Registers{address_of(omit_fp_chain_b) + 1, stack.end() - 8, 0}, stack);
  EXPECT_EQ(result.result.stop, WalkStop::kBadFrame);
}

TEST(FakeStack, PltStubFrames) {
  const auto* libc = LoadedModules::instance().find("/libc.so.6");
  ASSERT_NE(libc, nullptr);
  std::optional<nmprof::unwind::test::ElfSection> plt = nmprof::unwind::test::readelf_section(libc->path, ".plt");
  ASSERT_TRUE(plt);
  uintptr_t entry = libc->load_bias + plt->address + 16;
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  uintptr_t caller = address_of(fp_chain_a) + 9;
  stack[0] = 77;  // the relocation index push $index leaves
  stack[1] = caller;
  stack[2] = 0, stack[3] = 0;
  // Before the push the return address is at [rsp]; after it (byte 11) at [rsp + 8].
  Walk before = walk(Registers{entry, stack.address(1), 0}, stack);
  Walk after = walk(Registers{entry + 11, stack.address(0), 0}, stack);
  for (const Walk* result : {&before, &after}) {
    ASSERT_GE(result->result.depth, 2u);
    EXPECT_EQ(result->frames[1], caller);
  }
}

TEST(FakeStack, RandomStacksNeverLeadOutside) {
  FakeStack stack;
  ASSERT_TRUE(stack.ok());
  const LoadedModules& modules = LoadedModules::instance();
  std::vector<uintptr_t> code;
  for (const auto& module : modules.modules()) {
    for (const MemoryRange& range : module.code) code.push_back(range.begin), code.push_back(range.end);
  }
  std::mt19937_64 random(42);
  auto code_pointer = [&] {
    size_t range = random() % (code.size() / 2);
    return code[2 * range] + random() % (code[2 * range + 1] - code[2 * range]);
  };
  auto word = [&]() -> uintptr_t {
    switch (random() % 6) {
      case 0: return stack.begin() + (random() % (FakeStack::kWords + 8)) * 8 - 32;   // near or in the stack
      case 1: return stack.begin() + random() % (FakeStack::kWords * 8);              // misaligned too
      case 2: return code_pointer();
      case 3: return 0;
      case 4: return random();
      default: return random() % 4096;
    }
  };
  size_t depth_total = 0;
  for (int round = 0; round < 3000; ++round) {
    for (size_t i = 0; i < FakeStack::kWords; ++i) stack[i] = word();
    Registers start{code_pointer(), stack.address(random() % FakeStack::kWords), word()};
    Walk result = walk(start, stack, 1 + random() % 64);
    depth_total += result.result.depth;
    ASSERT_GE(result.result.depth, result.result.stop == WalkStop::kUnknownCode ? 0u : 1u);
  }
  EXPECT_GT(depth_total, 3000u);  // the walks did follow something
}
