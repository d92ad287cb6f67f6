// Tables of the modules really loaded in this process: they all build, known entry
// points have the entry rule, and rows agree with readelf's reading of the same files.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "tests/unwind/frame_rule.h"
#include "tests/unwind/loaded_modules.h"
#include "tests/unwind/readelf_oracle.h"

using namespace nmprof::unwind;
using namespace nmprof::unwind::test;

namespace {

// The rule FrameTable should hold for a row as readelf prints it; nothing where
// readelf cannot tell (a CFA expression: its PLT form is checked separately).
std::optional<Rule> expected_rule(const ReadelfRow& row) {
  if (row.cfa == "exp") return std::nullopt;
  if (row.ra == "u") return kOutermost;
  if (row.ra != "c-8" || (!row.rsp.empty() && row.rsp != "u")) return kNoRule;
  CfaBase base;
  if (row.cfa.starts_with("rsp+")) {
    base = CfaBase::kRsp;
  } else if (row.cfa.starts_with("rbp+")) {
    base = CfaBase::kRbp;
  } else {
    return kNoRule;
  }
  long offset = std::stol(row.cfa.substr(4));
  if (offset > static_cast<long>(FrameRow::kMaxCfaOffset)) return kNoRule;
  int slot = FrameRow::kRbpUnknown;
  if (row.rbp.empty() || row.rbp == "u" || row.rbp == "s") {
    slot = FrameRow::kRbpUnchanged;  // readelf's "u" is also "not saved yet"
  } else if (row.rbp.starts_with("c")) {
    long rbp_offset = std::stol(row.rbp.substr(1));
    if (rbp_offset % 8 == 0 && rbp_offset != 0 && rbp_offset / 8 >= FrameRow::kMinRbpSlot &&
        rbp_offset / 8 <= FrameRow::kMaxRbpSlot) {
      slot = static_cast<int>(rbp_offset / 8);
    }
  }
  return Rule{base, static_cast<uint32_t>(offset), slot};
}

const LoadedModule& module_named(std::string_view suffix) {
  const LoadedModule* module = LoadedModules::instance().find(suffix);
  if (module == nullptr) throw std::runtime_error("module not loaded: " + std::string(suffix));
  return *module;
}

std::string file_of(const LoadedModule& module) { return module.path.empty() ? "/proc/self/exe" : module.path; }

}  // namespace

TEST(LoadedModules, EveryModuleBuildsWithoutError) {
  const LoadedModules& modules = LoadedModules::instance();
  ASSERT_GE(modules.modules().size(), 8u);
  for (const LoadedModule& module : modules.modules()) {
    SCOPED_TRACE(module.path.empty() ? "(executable)" : module.path);
    if (module.path.ends_with("/libnmprof_test_fp_only.so")) {
      // Built without unwind tables, so the linker wrote no .eh_frame_hdr.
      EXPECT_STREQ(module.build.error, "no PT_GNU_EH_FRAME segment");
      EXPECT_TRUE(module.build.table.rows().empty());
      continue;
    }
    EXPECT_EQ(module.build.error, nullptr) << module.build.error;
    EXPECT_GT(module.build.fdes, 0u);
    EXPECT_EQ(module.build.rejected_fdes, 0u);
    EXPECT_FALSE(module.build.table.rows().empty());
  }
  // The vDSO is a module like the others.
  EXPECT_NE(modules.find("linux-vdso.so.1"), nullptr);
}

TEST(LoadedModules, FunctionEntryPointsHaveTheEntryRule) {
  const LoadedModules& modules = LoadedModules::instance();
  for (const char* name : {"malloc", "free", "calloc", "qsort", "memcpy", "strlen", "printf", "pthread_create",
                           "deflate", "inflate", "deflateInit2_", "_ZSt9terminatev", "omit_fp_chain_a",
                           "omit_fp_chain_d", "cfi_ops_rbp_frame", "cfi_ops_signed_offsets"}) {
    SCOPED_TRACE(name);
    void* address = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(address, nullptr);
    auto pc = reinterpret_cast<uintptr_t>(address);
    const FrameTable* table = modules.table_for(pc);
    ASSERT_NE(table, nullptr);
    // On entry the return address is at [rsp] and rbp is the caller's.
    EXPECT_EQ(rule_at(*table, pc), (Rule{CfaBase::kRsp, 8, FrameRow::kRbpUnchanged}));
  }
}

TEST(LoadedModules, NoRowsOutsideAModule) {
  const LoadedModule& libc = module_named("/libc.so.6");
  EXPECT_EQ(libc.build.table.find(libc.load_bias - 1), nullptr);
  EXPECT_EQ(libc.build.table.find(0), nullptr);
  EXPECT_EQ(libc.build.table.find(UINTPTR_MAX), nullptr);
  EXPECT_EQ(FrameTable().find(reinterpret_cast<uintptr_t>(&malloc)), nullptr);
}

TEST(LoadedModules, RowsAgreeWithReadelf) {
  for (std::string_view suffix : {"/libc.so.6", "/libz.so.1", "/libstdc++.so.6", "/libgcc_s.so.1",
                                  "/libnmprof_test_omit_fp.so", "/libnmprof_test_cfi_ops.so"}) {
    const LoadedModule& module = module_named(suffix);
    SCOPED_TRACE(module.path);
    std::vector<ReadelfFde> fdes = readelf_eh_frame(file_of(module));
    ASSERT_GT(fdes.size(), 3u) << "readelf (binutils) gave nothing";
    std::set<uint64_t> fde_starts;
    for (const ReadelfFde& fde : fdes) fde_starts.insert(fde.pc_begin);
    size_t compared = 0, mismatches = 0;
    for (const ReadelfFde& fde : fdes) {
      for (const ReadelfRow& row : fde.rows) {
        std::optional<Rule> expected = expected_rule(row);
        if (!expected || row.pc >= fde.pc_end) continue;
        ++compared;
        Rule actual = rule_at(module.build.table, module.load_bias + row.pc);
        if (actual != *expected && ++mismatches <= 10) {
          ADD_FAILURE() << std::hex << "pc 0x" << row.pc << " (FDE 0x" << fde.pc_begin << ") cfa " << row.cfa
                        << " rbp " << row.rbp << " ra " << row.ra << ": expected " << *expected << ", got "
                        << actual;
        }
      }
      if (!fde_starts.count(fde.pc_end)) {
        EXPECT_EQ(rule_at(module.build.table, module.load_bias + fde.pc_end), kNoRule)
            << "past FDE 0x" << std::hex << fde.pc_begin;
      }
    }
    EXPECT_EQ(mismatches, 0u);
    EXPECT_GT(compared, fdes.size());
  }
}

TEST(LoadedModules, PltEntriesFollowTheStubExpression) {
  const LoadedModule& libc = module_named("/libc.so.6");
  std::optional<ElfSection> plt = readelf_section(libc.path, ".plt");
  ASSERT_TRUE(plt);
  ASSERT_GE(plt->size, 48u);
  // Entry 0 is the resolver trampoline with plain rows; every other entry is
  // jmp *GOT (6 bytes), push $index (5 bytes), jmp entry 0: 8 more after byte 11.
  for (uint64_t address = plt->address + 16; address < plt->address + plt->size; ++address) {
    uint32_t expected_offset = address % 16 < 11 ? 8 : 16;
    ASSERT_EQ(rule_at(libc.build.table, libc.load_bias + address),
              (Rule{CfaBase::kRsp, expected_offset, FrameRow::kRbpUnchanged}))
        << std::hex << "pc 0x" << address;
  }
}
