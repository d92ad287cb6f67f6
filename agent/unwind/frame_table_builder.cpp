#include "agent/unwind/frame_table_builder.h"

#include <algorithm>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "agent/unwind/cfa_program.h"

namespace nmprof::unwind {
namespace {

// Lazy PLTs are a few KiB; a larger range under the PLT rule means bad data.
constexpr uint64_t kMaxPltBytes = 1 << 20;
constexpr uint64_t kPltEntryBytes = 16;
// Linkers write 2 to 5 loadable segments; .eh_frame is in one of the first few.
constexpr size_t kMaxReadableSegments = 16;

const uint8_t* bytes_at(uintptr_t address) { return reinterpret_cast<const uint8_t*>(address); }

// The end of the readable range holding `address`, or 0.
uintptr_t readable_end(std::span<const MemoryRange> readable, uintptr_t address) {
  for (const MemoryRange& range : readable) {
    if (range.begin <= address && address < range.end) return range.end;
  }
  return 0;
}

// The row for a state whose CFA is register-based; kNone if the walker can't follow it.
FrameRow compile_rule(const UnwindState& state) {
  FrameRow row{};
  const RegisterRule& ra = state.return_address;
  if (ra.kind == RegisterRule::Kind::kUndefined) {
    row.cfa_base = static_cast<uint32_t>(CfaBase::kOutermost);
    return row;
  }
  if (ra.kind != RegisterRule::Kind::kSavedAtCfaOffset || ra.offset != -8) return row;
  if (state.rsp.kind != RegisterRule::Kind::kSameValue) return row;
  if (state.cfa.kind != CfaRule::Kind::kRegisterOffset) return row;
  if (state.cfa.offset < 0 || state.cfa.offset > FrameRow::kMaxCfaOffset) return row;
  CfaBase base;
  if (state.cfa.reg == x86_64_reg::kRsp) {
    base = CfaBase::kRsp;
  } else if (state.cfa.reg == x86_64_reg::kRbp) {
    base = CfaBase::kRbp;
  } else {
    return row;
  }

  int rbp_slot = FrameRow::kRbpUnknown;
  const RegisterRule& rbp = state.rbp;
  if (rbp.kind == RegisterRule::Kind::kSameValue) {
    rbp_slot = FrameRow::kRbpUnchanged;
  } else if (rbp.kind == RegisterRule::Kind::kSavedAtCfaOffset && rbp.offset % 8 == 0 && rbp.offset != 0 &&
             rbp.offset / 8 >= FrameRow::kMinRbpSlot && rbp.offset / 8 <= FrameRow::kMaxRbpSlot) {
    rbp_slot = static_cast<int>(rbp.offset / 8);
  }
  row.cfa_offset = static_cast<uint32_t>(state.cfa.offset);
  row.cfa_base = static_cast<uint32_t>(base);
  row.rbp_slot = rbp_slot;
  return row;
}

// Collects rows in pc order. A row replaces those at or after its pc, so rows stay
// sorted whatever order bad data comes in, and a run of equal rules is one row.
class RowCompiler {
 public:
  explicit RowCompiler(uintptr_t load_bias) : load_bias_(load_bias) {}

  void add_fde(const FrameDescription& fde, std::span<const UnwindStateRow> states) {
    for (size_t i = 0; i < states.size(); ++i) {
      uint64_t end = i + 1 < states.size() ? states[i + 1].pc : fde.pc_end;
      const UnwindState& state = states[i].state;
      if (state.cfa.kind == CfaRule::Kind::kPltStub) {
        add_plt_rows(states[i].pc, end, state);
      } else {
        add(states[i].pc, compile_rule(state));
      }
    }
    add(fde.pc_end, FrameRow{});
  }

  std::vector<FrameRow> take() {
    rows_.shrink_to_fit();
    return std::move(rows_);
  }

 private:
  // The PLT rule depends on the pc's place in its 16-byte entry: two rows per entry.
  void add_plt_rows(uint64_t begin, uint64_t end, const UnwindState& state) {
    if (end - begin > kMaxPltBytes) return add(begin, FrameRow{});
    UnwindState before_push = state;
    before_push.cfa = CfaRule{CfaRule::Kind::kRegisterOffset, x86_64_reg::kRsp, state.cfa.offset};
    UnwindState after_push = before_push;
    after_push.cfa.offset += 8;
    FrameRow before_row = compile_rule(before_push);
    FrameRow after_row = compile_rule(after_push);
    for (uint64_t entry = begin & ~(kPltEntryBytes - 1); entry < end; entry += kPltEntryBytes) {
      uint64_t pushed = entry + state.cfa.plt_threshold;
      add(std::max(entry, begin), before_row);
      if (pushed < end) add(std::max(pushed, begin), after_row);
    }
  }

  void add(uint64_t pc, FrameRow rule) {
    auto offset = static_cast<uint32_t>(pc - load_bias_);  // the caller checked the FDE's range
    while (!rows_.empty() && rows_.back().pc >= offset) rows_.pop_back();
    if (rows_.empty() ? rule.base() == CfaBase::kNone : rows_.back().same_rule(rule)) return;
    rule.pc = offset;
    rows_.push_back(rule);
  }

  uintptr_t load_bias_;
  std::vector<FrameRow> rows_;
};

// Compiles FDEs one by one, keeping the program of the last CIE seen: FDEs sharing a CIE
// are adjacent in practice.
class FdeCompiler {
 public:
  FdeCompiler(MemoryRange eh_frame, uintptr_t load_bias, RowCompiler& rows)
      : eh_frame_(eh_frame), load_bias_(load_bias), rows_(rows) {}

  // False when the FDE was left out.
  bool compile(uint64_t table_pc, uint64_t fde_address) {
    if (!inside_eh_frame(fde_address)) return false;
    std::optional<EhFrameEntry> entry = read_eh_frame_entry(bytes_at(fde_address), bytes_at(eh_frame_.end));
    if (!entry || entry->is_cie()) return false;
    const CfaProgram* program = program_for(entry->cie_address());
    if (program == nullptr) return false;
    std::optional<FrameDescription> fde = parse_fde(*entry, program->cie());
    if (!fde || fde->pc_begin != table_pc) return false;
    if (fde->pc_begin == fde->pc_end) return true;
    if (fde->pc_begin < load_bias_ || fde->pc_end - load_bias_ > std::numeric_limits<uint32_t>::max()) return false;
    if (!program->run(*fde, states_)) return false;
    rows_.add_fde(*fde, states_);
    return true;
  }

 private:
  bool inside_eh_frame(uint64_t address) const { return address >= eh_frame_.begin && address < eh_frame_.end; }

  const CfaProgram* program_for(uint64_t cie_address) {
    if (cie_address != cie_address_) {
      cie_address_ = cie_address;
      program_.reset();
      if (!inside_eh_frame(cie_address)) return nullptr;
      std::optional<EhFrameEntry> entry = read_eh_frame_entry(bytes_at(cie_address), bytes_at(eh_frame_.end));
      if (!entry || !entry->is_cie()) return nullptr;
      if (std::optional<CommonInformation> cie = parse_cie(*entry)) program_.emplace(*cie);
    }
    return program_ && program_->ok() ? &*program_ : nullptr;
  }

  MemoryRange eh_frame_;
  uintptr_t load_bias_;
  RowCompiler& rows_;
  uint64_t cie_address_ = 0;
  std::optional<CfaProgram> program_;
  std::vector<UnwindStateRow> states_;  // reused from FDE to FDE
};

}  // namespace

namespace {

FrameTableBuild build_from_header(MemoryRange eh_frame_hdr, std::span<const MemoryRange> readable,
                                  uintptr_t load_bias) {
  FrameTableBuild build;
  uintptr_t hdr_end = std::min(readable_end(readable, eh_frame_hdr.begin), eh_frame_hdr.end);
  if (hdr_end <= eh_frame_hdr.begin) {
    build.error = ".eh_frame_hdr is not in a readable segment";
    return build;
  }
  DwarfReader hdr(bytes_at(eh_frame_hdr.begin), bytes_at(hdr_end));
  uint8_t version = hdr.u8();
  uint8_t eh_frame_encoding = hdr.u8();
  uint8_t count_encoding = hdr.u8();
  uint8_t table_encoding = hdr.u8();
  if (!hdr.ok() || version != 1) {
    build.error = "unsupported .eh_frame_hdr version";
    return build;
  }
  if (eh_frame_encoding == eh_pe::kOmit || count_encoding == eh_pe::kOmit || table_encoding == eh_pe::kOmit) {
    build.error = ".eh_frame_hdr has no search table";
    return build;
  }
  uint64_t eh_frame = hdr.encoded_pointer(eh_frame_encoding, eh_frame_hdr.begin);
  uint64_t count = hdr.encoded_pointer(count_encoding, eh_frame_hdr.begin);
  uintptr_t eh_frame_end = readable_end(readable, eh_frame);
  if (!hdr.ok() || eh_frame_end == 0) {
    build.error = ".eh_frame is not in a readable segment";
    return build;
  }

  RowCompiler rows(load_bias);
  FdeCompiler fdes(MemoryRange{eh_frame, eh_frame_end}, load_bias, rows);
  build.fdes = count;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t table_pc = hdr.encoded_pointer(table_encoding, eh_frame_hdr.begin);
    uint64_t fde_address = hdr.encoded_pointer(table_encoding, eh_frame_hdr.begin);
    if (!hdr.ok()) {  // the table claims more entries than the segment holds
      build.rejected_fdes += count - i;
      break;
    }
    if (!fdes.compile(table_pc, fde_address)) ++build.rejected_fdes;
  }
  build.table = FrameTable(load_bias, rows.take());
  return build;
}

}  // namespace

FrameTableBuild build_frame_table(MemoryRange eh_frame_hdr, std::span<const MemoryRange> readable,
                                  uintptr_t load_bias) {
  try {
    return build_from_header(eh_frame_hdr, readable, load_bias);
  } catch (const std::bad_alloc&) {  // inside someone else's process: report, never throw
    FrameTableBuild build;
    build.error = "out of memory";
    return build;
  }
}

FrameTableBuild build_frame_table(const dl_phdr_info& module) {
  MemoryRange eh_frame_hdr;
  MemoryRange readable[kMaxReadableSegments];
  size_t readable_count = 0;
  for (ElfW(Half) i = 0; i < module.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = module.dlpi_phdr[i];
    uintptr_t begin = module.dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_GNU_EH_FRAME) {
      eh_frame_hdr = MemoryRange{begin, begin + segment.p_memsz};
    } else if (segment.p_type == PT_LOAD && (segment.p_flags & PF_R) && readable_count < kMaxReadableSegments) {
      readable[readable_count++] = MemoryRange{begin, begin + segment.p_memsz};
    }
  }
  if (eh_frame_hdr.begin == 0) {
    FrameTableBuild build;
    build.error = "no PT_GNU_EH_FRAME segment";
    return build;
  }
  return build_frame_table(eh_frame_hdr, std::span(readable, readable_count), module.dlpi_addr);
}

}  // namespace nmprof::unwind
