// The builder on synthetic unwind data (every pointer encoding, augmentation and
// instruction form, and malformed variants) and on corrupted copies of libc's.
#include "agent/unwind/frame_table_builder.h"

#include <gtest/gtest.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "tests/unwind/eh_frame_image.h"
#include "tests/unwind/frame_rule.h"

using namespace nmprof::unwind;
using nmprof::unwind::test::EhFrameImage;
using nmprof::unwind::test::kNoRule;
using nmprof::unwind::test::kOutermost;
using nmprof::unwind::test::Rule;
using nmprof::unwind::test::rule_at;

namespace {

Rule rsp(uint32_t offset, int rbp_slot = FrameRow::kRbpUnchanged) { return Rule{CfaBase::kRsp, offset, rbp_slot}; }

// push rbp; mov rsp, rbp: the usual prologue, one instruction per byte for brevity.
const std::vector<uint8_t> kPrologue = {
    cfa_op::kAdvanceLoc | 1, cfa_op::kDefCfaOffset, 16, cfa_op::kOffset | 6, 2,
    cfa_op::kAdvanceLoc | 3, cfa_op::kDefCfaRegister, 6};

void expect_prologue_rows(const FrameTable& table, uintptr_t pc) {
  EXPECT_EQ(rule_at(table, pc), rsp(8));
  EXPECT_EQ(rule_at(table, pc + 1), rsp(16, -2));
  EXPECT_EQ(rule_at(table, pc + 3), rsp(16, -2));
  EXPECT_EQ(rule_at(table, pc + 4), (Rule{CfaBase::kRbp, 16, -2}));
}

// One FDE of `instructions` over [code(0), code(64)).
FrameTableBuild build_one(EhFrameImage& image, const std::vector<uint8_t>& instructions,
                          const EhFrameImage::Cie& cie = {}) {
  image.add_fde(image.add_cie(cie), image.code(0), 64, instructions);
  return image.build();
}

}  // namespace

TEST(FrameTableBuilder, ReadsFdeAddressesInEveryEncoding) {
  for (uint8_t encoding : {eh_pe::kAbsptr, eh_pe::kUdata8, eh_pe::kSdata8, eh_pe::kUleb128, eh_pe::kSleb128,
                           uint8_t(eh_pe::kPcrel | eh_pe::kUdata2), uint8_t(eh_pe::kPcrel | eh_pe::kSdata2),
                           uint8_t(eh_pe::kPcrel | eh_pe::kUdata4), uint8_t(eh_pe::kPcrel | eh_pe::kSdata4),
                           uint8_t(eh_pe::kPcrel | eh_pe::kUdata8), uint8_t(eh_pe::kPcrel | eh_pe::kSdata8),
                           uint8_t(eh_pe::kPcrel | eh_pe::kUleb128), uint8_t(eh_pe::kPcrel | eh_pe::kSleb128),
                           eh_pe::kAligned}) {
    SCOPED_TRACE(int(encoding));
    EhFrameImage image;
    EhFrameImage::Cie cie;
    cie.fde_encoding = encoding;
    size_t cie_offset = image.add_cie(cie);
    image.add_fde(cie_offset, image.code(0x100), 64, kPrologue);
    FrameTableBuild build = image.build();
    EXPECT_EQ(build.error, nullptr);
    EXPECT_EQ(build.rejected_fdes, 0u);
    expect_prologue_rows(build.table, image.code(0x100));
    EXPECT_EQ(rule_at(build.table, image.code(0x100 + 64)), kNoRule);
    EXPECT_EQ(rule_at(build.table, image.code(0x100 - 1)), kNoRule);
  }
}

TEST(FrameTableBuilder, RejectsFdeAddressEncodingsThatCannotNameCode) {
  for (uint8_t encoding : {uint8_t(eh_pe::kTextrel | eh_pe::kSdata4), uint8_t(eh_pe::kFuncrel | eh_pe::kSdata4),
                           uint8_t(eh_pe::kDatarel | eh_pe::kSdata4),
                           uint8_t(eh_pe::kIndirect | eh_pe::kPcrel | eh_pe::kSdata4)}) {
    EhFrameImage image;
    EhFrameImage::Cie cie;
    cie.fde_encoding = encoding;
    image.add_fde(image.add_cie(cie), image.code(0), 64, kPrologue);
    FrameTableBuild build = image.build();
    EXPECT_EQ(build.rejected_fdes, 1u) << int(encoding);
    EXPECT_TRUE(build.table.rows().empty());
  }
}

TEST(FrameTableBuilder, CieVersionsAndAugmentations) {
  struct Case {
    uint8_t version;
    std::string augmentation;
    uint8_t personality_encoding;
    bool usable;
  };
  const uint8_t kIndirectPcrel = eh_pe::kIndirect | EhFrameImage::kPcrelSdata4;
  for (const Case& c : {Case{1, "zR", 0, true}, Case{3, "zR", 0, true}, Case{4, "zR", 0, true},
                        Case{1, "zPLR", kIndirectPcrel, true}, Case{1, "zPLRS", eh_pe::kAligned, true},
                        Case{1, "zRS", 0, true}, Case{1, "zRX", 0, true},  // unknown letters after z are skipped
                        Case{1, "", 0, true}, Case{2, "zR", 0, false}, Case{1, "eh", 0, false},
                        Case{1, "R", 0, false}}) {
    SCOPED_TRACE("version " + std::to_string(c.version) + " \"" + c.augmentation + "\"");
    EhFrameImage::Cie cie;
    cie.version = c.version;
    cie.augmentation = c.augmentation;
    cie.personality_encoding = c.personality_encoding;
    if (c.augmentation.find('R') == std::string::npos) cie.fde_encoding = eh_pe::kAbsptr;
    if (c.version != 1) cie.return_address_register = 16;  // ULEB then
    EhFrameImage image;
    FrameTableBuild build = build_one(image, kPrologue, cie);
    EXPECT_EQ(build.rejected_fdes, c.usable ? 0u : 1u);
    if (c.usable) expect_prologue_rows(build.table, image.code(0));
  }
}

TEST(FrameTableBuilder, ExtendedLengthEntries) {
  EhFrameImage image;
  EhFrameImage::Cie cie;
  cie.extended_length = true;
  size_t cie_offset = image.add_cie(cie);
  image.add_fde(cie_offset, image.code(0), 64, kPrologue, /*extended_length=*/true);
  FrameTableBuild build = image.build();
  EXPECT_EQ(build.rejected_fdes, 0u);
  expect_prologue_rows(build.table, image.code(0));
}

TEST(FrameTableBuilder, LocationInstructions) {
  EhFrameImage image;
  EhFrameImage::Cie cie;
  size_t cie_offset = image.add_cie(cie);
  uintptr_t pc = image.code(0);
  std::vector<uint8_t> program = {cfa_op::kSetLoc};  // to pc + 8, in the CIE's pcrel sdata4
  size_t set_loc_operand = program.size();
  program.resize(program.size() + 4);
  std::vector<uint8_t> rest = {cfa_op::kDefCfaOffset, 16,
                               cfa_op::kAdvanceLoc1, 0x10, cfa_op::kDefCfaOffset, 24,
                               cfa_op::kAdvanceLoc2, 0x00, 0x01, cfa_op::kDefCfaOffset, 32,
                               cfa_op::kAdvanceLoc4, 0x00, 0x00, 0x01, 0x00, cfa_op::kDefCfaOffset, 40};
  program.insert(program.end(), rest.begin(), rest.end());
  // The operand's own address is only known once placed: FDE body starts after
  // length(4) + id(4) + pc_begin(4) + range(4) + augmentation length(1).
  uintptr_t fde = image.add_fde(cie_offset, pc, 0x20000, program);
  auto operand_address = fde + 17 + set_loc_operand;
  int32_t delta = static_cast<int32_t>(pc + 8 - operand_address);
  std::memcpy(&image.bytes()[operand_address - image.base()], &delta, 4);
  FrameTableBuild build = image.build();
  ASSERT_EQ(build.rejected_fdes, 0u);
  EXPECT_EQ(rule_at(build.table, pc + 7), rsp(8));
  EXPECT_EQ(rule_at(build.table, pc + 8), rsp(16));
  EXPECT_EQ(rule_at(build.table, pc + 0x18), rsp(24));
  EXPECT_EQ(rule_at(build.table, pc + 0x117), rsp(24));
  EXPECT_EQ(rule_at(build.table, pc + 0x118), rsp(32));
  EXPECT_EQ(rule_at(build.table, pc + 0x10117), rsp(32));
  EXPECT_EQ(rule_at(build.table, pc + 0x10118), rsp(40));
  EXPECT_EQ(rule_at(build.table, pc + 0x20000), kNoRule);
}

TEST(FrameTableBuilder, CodeAlignmentFactorScalesAdvances) {
  EhFrameImage image;
  EhFrameImage::Cie cie;
  cie.code_alignment = 4;
  FrameTableBuild build = build_one(image, {cfa_op::kAdvanceLoc | 2, cfa_op::kDefCfaOffset, 16}, cie);
  EXPECT_EQ(rule_at(build.table, image.code(7)), rsp(8));
  EXPECT_EQ(rule_at(build.table, image.code(8)), rsp(16));
}

TEST(FrameTableBuilder, RegisterRules) {
  struct Case {
    const char* what;
    std::vector<uint8_t> instructions;
    Rule expected;
  };
  const Rule kOutermost{CfaBase::kOutermost, 0, 0};
  const int kUnknown = FrameRow::kRbpUnknown;
  for (const Case& c : std::vector<Case>{
           {"rbp at CFA-16", {cfa_op::kOffset | 6, 2}, rsp(8, -2)},
           {"rbp via offset_extended_sf", {cfa_op::kOffsetExtendedSf, 6, 3}, rsp(8, -3)},
           {"rbp via GNU_negative_offset_extended", {cfa_op::kGnuNegativeOffsetExtended, 6, 2}, rsp(8, 2)},
           {"rbp undefined", {cfa_op::kUndefined, 6}, rsp(8, kUnknown)},
           {"rbp in another register", {cfa_op::kRegister, 6, 3}, rsp(8, kUnknown)},
           {"rbp as val_offset", {cfa_op::kValOffset, 6, 1}, rsp(8, kUnknown)},
           {"rbp as expression", {cfa_op::kExpression, 6, 1, 0x96}, rsp(8, kUnknown)},
           {"rbp too far for a slot", {cfa_op::kOffsetExtended, 6, 0x80, 0x01}, rsp(8, kUnknown)},
           {"rbp saved, then same_value", {cfa_op::kOffset | 6, 2, cfa_op::kSameValue, 6}, rsp(8)},
           {"rbp saved, then restored", {cfa_op::kOffset | 6, 2, cfa_op::kRestore | 6}, rsp(8)},
           {"rbp saved, then restore_extended", {cfa_op::kOffset | 6, 2, cfa_op::kRestoreExtended, 6}, rsp(8)},
           {"other registers ignored", {cfa_op::kOffset | 3, 2, cfa_op::kRegister, 12, 13, cfa_op::kUndefined, 14,
                                        cfa_op::kValExpression, 15, 1, 0x96, cfa_op::kValOffsetSf, 12, 1}, rsp(8)},
           {"GNU_args_size and nop", {cfa_op::kGnuArgsSize, 16, cfa_op::kNop}, rsp(8)},
           {"CFA via def_cfa_sf", {cfa_op::kDefCfaSf, 7, 0x7c}, rsp(32)},
           {"CFA via def_cfa_offset_sf", {cfa_op::kDefCfaOffsetSf, 0x7a}, rsp(48)},
           {"CFA in r10", {cfa_op::kDefCfaRegister, 10}, kNoRule},
           {"CFA offset over 4 MiB", {cfa_op::kDefCfa, 7, 0x80, 0x80, 0x80, 0x02}, kNoRule},
           {"CFA as a non-PLT expression", {cfa_op::kDefCfaExpression, 2, 0x77, 0x08}, kNoRule},
           {"offset after an expression CFA", {cfa_op::kDefCfaExpression, 2, 0x77, 0x08, cfa_op::kDefCfaOffset, 8},
            kNoRule},
           {"return address undefined", {cfa_op::kUndefined, 16}, kOutermost},
           {"return address at CFA-16", {cfa_op::kOffset | 16, 2}, kNoRule},
           {"return address as val_offset", {cfa_op::kValOffset, 16, 1}, kNoRule},
           {"a rule for rsp", {cfa_op::kOffset | 7, 2}, kNoRule},
       }) {
    EhFrameImage image;
    FrameTableBuild build = build_one(image, c.instructions);
    EXPECT_EQ(build.rejected_fdes, 0u) << c.what;
    EXPECT_EQ(rule_at(build.table, image.code(0)), c.expected) << c.what;
  }
}

TEST(FrameTableBuilder, RememberAndRestoreStateIncludeTheCfa) {
  EhFrameImage image;
  FrameTableBuild build = build_one(image, {cfa_op::kDefCfa, 6, 16, cfa_op::kOffset | 6, 2,  // rbp frame
                                            cfa_op::kRememberState, cfa_op::kAdvanceLoc | 1,
                                            cfa_op::kDefCfa, 7, 8, cfa_op::kRestore | 6,         // epilogue
                                            cfa_op::kAdvanceLoc | 1, cfa_op::kRestoreState});
  EXPECT_EQ(rule_at(build.table, image.code(0)), (Rule{CfaBase::kRbp, 16, -2}));
  EXPECT_EQ(rule_at(build.table, image.code(1)), rsp(8));
  EXPECT_EQ(rule_at(build.table, image.code(2)), (Rule{CfaBase::kRbp, 16, -2}));
}

TEST(FrameTableBuilder, PltStubExpressionBecomesTwoRowsPerEntry) {
  // DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge;
  // DW_OP_lit3; DW_OP_shl; DW_OP_plus, as ld writes it for .plt.
  std::vector<uint8_t> plt = {cfa_op::kDefCfaExpression, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
  EhFrameImage image;
  uintptr_t pc = image.code(0);
  ASSERT_EQ(pc % 16, 0u);
  FrameTableBuild build = build_one(image, plt);
  for (uintptr_t offset = 0; offset < 64; ++offset) {
    EXPECT_EQ(rule_at(build.table, pc + offset), rsp(offset % 16 < 11 ? 8 : 16)) << offset;
  }
  EXPECT_EQ(rule_at(build.table, pc + 64), kNoRule);
  EXPECT_LE(build.table.rows().size(), 4u * 2 + 1);

  plt[8] = 0x3a;  // DW_OP_lit10
  EhFrameImage other;
  build = build_one(other, plt);
  EXPECT_EQ(rule_at(build.table, other.code(9)), rsp(8));
  EXPECT_EQ(rule_at(build.table, other.code(10)), rsp(16));
}

TEST(FrameTableBuilder, RejectsMalformedPrograms) {
  std::vector<uint8_t> too_deep(17, cfa_op::kRememberState);
  for (const auto& [what, instructions] : std::vector<std::pair<const char*, std::vector<uint8_t>>>{
           {"unknown instruction", {0x1d, 1, 2, 3}},
           {"restore_state without remember_state", {cfa_op::kRestoreState}},
           {"remember_state nested too deep", too_deep},
           {"truncated operand", {cfa_op::kDefCfa, 7, 0x80}},
           {"expression longer than the FDE", {cfa_op::kDefCfaExpression, 40, 0x77}},
           // Found by fuzz/eh_frame_fuzzer (fuzz/regressions/eh_frame): 2^61 times the
           // data alignment (-8) overflowed.
           {"factored offset past 64 bits", {cfa_op::kOffsetExtendedSf, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}},
           {"factored CFA offset past 64 bits", {cfa_op::kDefCfaSf, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}},
       }) {
    EhFrameImage image;
    FrameTableBuild build = build_one(image, instructions);
    EXPECT_EQ(build.rejected_fdes, 1u) << what;
    EXPECT_EQ(rule_at(build.table, image.code(0)), kNoRule) << what;
  }
  // Rows past the FDE's end are dropped, not an error.
  EhFrameImage image;
  FrameTableBuild build = build_one(image, {cfa_op::kAdvanceLoc2, 0, 1, cfa_op::kDefCfaOffset, 16});
  EXPECT_EQ(build.rejected_fdes, 0u);
  EXPECT_EQ(rule_at(build.table, image.code(63)), rsp(8));
  EXPECT_EQ(rule_at(build.table, image.code(64)), kNoRule);
}

TEST(FrameTableBuilder, HeaderProblems) {
  {
    EhFrameImage image;
    image.set_header_version(2);
    EXPECT_NE(build_one(image, kPrologue).error, nullptr);
  }
  {
    EhFrameImage image;
    image.set_count_encoding(eh_pe::kOmit);
    EXPECT_NE(build_one(image, kPrologue).error, nullptr);
  }
  {
    // The table claims more entries than its segment holds.
    EhFrameImage image;
    image.set_listed_count(1000);
    FrameTableBuild build = build_one(image, kPrologue);
    EXPECT_EQ(build.error, nullptr);
    EXPECT_EQ(build.rejected_fdes, 999u);
    expect_prologue_rows(build.table, image.code(0));
  }
  {
    // Entries that disagree with the FDE, point outside .eh_frame or at a CIE.
    EhFrameImage image;
    size_t cie = image.add_cie({});
    image.add_fde(cie, image.code(0), 64, kPrologue);
    image.add_fde(cie, image.code(0x100), 64, kPrologue);
    image.table()[0].first += 1;
    image.table().push_back({image.code(0x200), image.base() + 4 * 1024 * 1024});
    image.table().push_back({image.code(0x300), image.base() + cie});
    FrameTableBuild build = image.build();
    EXPECT_EQ(build.rejected_fdes, 3u);
    EXPECT_EQ(rule_at(build.table, image.code(0)), kNoRule);
    expect_prologue_rows(build.table, image.code(0x100));
  }
}

TEST(FrameTableBuilder, AdjacentFdesWithEqualRulesShareRows) {
  EhFrameImage image;
  size_t cie = image.add_cie({});
  for (int i = 0; i < 10; ++i) image.add_fde(cie, image.code(16 * i), 16, {});
  FrameTableBuild build = image.build();
  EXPECT_EQ(build.table.rows().size(), 2u);  // rsp + 8 over all ten, then the end
  EXPECT_EQ(rule_at(build.table, image.code(159)), rsp(8));
  EXPECT_EQ(rule_at(build.table, image.code(160)), kNoRule);
}

namespace {

// A copy of one readable segment of a loaded module, placed at the same offset within
// a page and fenced by inaccessible pages: any read outside it faults.
class FencedCopy {
 public:
  FencedCopy(uintptr_t begin, uintptr_t end) : page_(sysconf(_SC_PAGESIZE)) {
    size_t offset = begin % page_;
    inner_ = (offset + (end - begin) + page_ - 1) / page_ * page_;
    total_ = inner_ + 2 * page_;
    void* area = mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) return;
    area_ = static_cast<uint8_t*>(area);
    mprotect(area_ + page_, inner_, PROT_READ | PROT_WRITE);
    copy_ = area_ + page_ + offset;
    size_ = end - begin;
    source_ = begin;
    std::memcpy(copy_, reinterpret_cast<const void*>(begin), size_);
  }
  ~FencedCopy() {
    if (area_) munmap(area_, total_);
  }
  bool ok() const { return area_ != nullptr; }
  uint8_t* data() { return copy_; }
  size_t size() const { return size_; }
  // Where an address of the original lands in the copy.
  uintptr_t moved(uintptr_t original) const { return original - source_ + reinterpret_cast<uintptr_t>(copy_); }
  void refresh() { std::memcpy(copy_, reinterpret_cast<const void*>(source_), size_); }

 private:
  size_t page_;
  size_t inner_ = 0, total_ = 0, size_ = 0;
  uint8_t* area_ = nullptr;
  uint8_t* copy_ = nullptr;
  uintptr_t source_ = 0;
};

struct EhFrameLocation {
  uintptr_t load_bias = 0;
  MemoryRange header;
  MemoryRange segment;  // the readable PT_LOAD holding the header (and, in libc, .eh_frame)
};

EhFrameLocation libc_eh_frame() {
  EhFrameLocation location;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (!std::string_view(info->dlpi_name).ends_with("/libc.so.6")) return 0;
        auto& location = *static_cast<EhFrameLocation*>(out);
        location.load_bias = info->dlpi_addr;
        for (int pass = 0; pass < 2; ++pass) {
          for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr)& segment = info->dlpi_phdr[i];
            uintptr_t begin = info->dlpi_addr + segment.p_vaddr, end = begin + segment.p_memsz;
            if (pass == 0 && segment.p_type == PT_GNU_EH_FRAME) location.header = {begin, end};
            if (pass == 1 && segment.p_type == PT_LOAD && begin <= location.header.begin &&
                location.header.begin < end) {
              location.segment = {begin, end};
            }
          }
        }
        return 1;
      },
      &location);
  return location;
}

}  // namespace

TEST(FrameTableBuilder, CorruptedCopiesOfLibcNeverReadOutsideTheirSegment) {
  EhFrameLocation libc = libc_eh_frame();
  ASSERT_NE(libc.segment.begin, 0u);
  FencedCopy copy(libc.segment.begin, libc.segment.end);
  ASSERT_TRUE(copy.ok());
  auto build_copy = [&] {
    MemoryRange readable{copy.moved(libc.segment.begin), copy.moved(libc.segment.end)};
    MemoryRange header{copy.moved(libc.header.begin), copy.moved(libc.header.end)};
    // pc-relative addresses moved with the copy: so does the load bias.
    return build_frame_table(header, std::span(&readable, 1), copy.moved(libc.load_bias));
  };

  // Intact, the copy gives exactly the rows of the original.
  FrameTableBuild original = build_frame_table(libc.header, std::span(&libc.segment, 1), libc.load_bias);
  FrameTableBuild intact = build_copy();
  ASSERT_EQ(intact.rejected_fdes, 0u);
  ASSERT_EQ(intact.table.rows().size(), original.table.rows().size());
  EXPECT_EQ(std::memcmp(intact.table.rows().data(), original.table.rows().data(),
                        original.table.rows().size() * sizeof(FrameRow)), 0);

  std::mt19937_64 random(20240601);
  size_t header_offset = libc.header.begin - libc.segment.begin;
  size_t eh_bytes = copy.size() - header_offset;
  for (int round = 0; round < 150; ++round) {
    copy.refresh();
    int flips = 1 + static_cast<int>(random() % 32);
    for (int i = 0; i < flips; ++i) {
      // Half the damage in the header and its table, half anywhere in .eh_frame.
      size_t span = i % 2 ? eh_bytes : std::min<size_t>(eh_bytes, 4096);
      copy.data()[header_offset + random() % span] ^= static_cast<uint8_t>(1 + random() % 255);
    }
    FrameTableBuild build = build_copy();
    std::span<const FrameRow> rows = build.table.rows();
    for (size_t i = 1; i < rows.size(); ++i) ASSERT_LT(rows[i - 1].pc, rows[i].pc) << "round " << round;
  }
}
