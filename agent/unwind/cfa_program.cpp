#include "agent/unwind/cfa_program.h"

#include <limits>

namespace nmprof::unwind {
namespace {

// Deep enough for any compiler output (gcc nests one level); deeper data is treated as bad.
constexpr int kMaxRememberedStates = 16;

// Matches DW_OP_breg7 <offset>; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit<K>;
// DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus, the CFA of ld's PLT stubs: 8 more once
// the stub has pushed its relocation index, at byte K of each 16-byte entry.
CfaRule plt_stub_rule(DwarfReader expression) {
  CfaRule rule{CfaRule::Kind::kOther};
  if (expression.u8() != expr_op::kBreg0 + x86_64_reg::kRsp) return rule;
  int64_t offset = expression.sleb128();
  if (expression.u8() != expr_op::kBreg0 + x86_64_reg::kReturnAddress || expression.sleb128() != 0) return rule;
  if (expression.u8() != expr_op::kLit15 || expression.u8() != expr_op::kAnd) return rule;
  uint8_t threshold = expression.u8() - expr_op::kLit0;
  if (threshold > 15 || expression.u8() != expr_op::kGe || expression.u8() != expr_op::kLit3 ||
      expression.u8() != expr_op::kShl || expression.u8() != expr_op::kPlus) {
    return rule;
  }
  if (!expression.ok() || !expression.at_end()) return rule;
  return CfaRule{CfaRule::Kind::kPltStub, x86_64_reg::kRsp, offset, threshold};
}

}  // namespace

CfaProgram::CfaProgram(const CommonInformation& cie) : cie_(cie) {
  uint64_t ra = cie.return_address_register;
  if (ra == x86_64_reg::kRbp || ra == x86_64_reg::kRsp) return;
  const UnwindState defaults;
  ok_ = execute(cie.initial_instructions, 0, 0, defaults, initial_, nullptr);
}

bool CfaProgram::run(const FrameDescription& fde, std::vector<UnwindStateRow>& rows) const {
  rows.clear();
  UnwindState state = initial_;
  return ok_ && execute(fde.instructions, fde.pc_begin, fde.pc_end, initial_, state, &rows);
}

RegisterRule UnwindState::*CfaProgram::tracked_register(uint64_t reg) const {
  if (reg == x86_64_reg::kRbp) return &UnwindState::rbp;
  if (reg == x86_64_reg::kRsp) return &UnwindState::rsp;
  if (reg == cie_.return_address_register) return &UnwindState::return_address;
  return nullptr;
}

// Without `rows` (the CIE's initial instructions) there is no pc to advance.
bool CfaProgram::execute(DwarfReader program, uint64_t pc, uint64_t pc_end, const UnwindState& restore_source,
                         UnwindState& state, std::vector<UnwindStateRow>* rows) const {
  UnwindState remembered[kMaxRememberedStates];
  int remembered_count = 0;

  auto advance_to = [&](uint64_t next_pc) {
    if (rows == nullptr || next_pc < pc) return false;
    if (next_pc > pc) rows->push_back({pc, state});
    pc = next_pc;
    return true;
  };
  auto advance_by = [&](uint64_t delta) {
    if (delta > (std::numeric_limits<uint64_t>::max() - pc) / cie_.code_alignment) return false;
    return advance_to(pc + delta * cie_.code_alignment);
  };
  auto set_rule = [&](uint64_t reg, RegisterRule rule) {
    if (RegisterRule UnwindState::*tracked = tracked_register(reg)) state.*tracked = rule;
  };
  auto restore_rule = [&](uint64_t reg) {
    if (RegisterRule UnwindState::*tracked = tracked_register(reg)) state.*tracked = restore_source.*tracked;
  };
  auto saved_at = [](int64_t offset) { return RegisterRule{RegisterRule::Kind::kSavedAtCfaOffset, offset}; };
  constexpr RegisterRule kOther{RegisterRule::Kind::kOther};
  const int64_t data_alignment = cie_.data_alignment;
  // A factored offset (DWARF 5, 6.4.2.1) that does not fit 64 bits is malformed data.
  bool offsets_fit = true;
  auto factored = [&](int64_t factor) {
    int64_t offset = 0;
    if (__builtin_mul_overflow(factor, data_alignment, &offset)) offsets_fit = false;
    return offset;
  };

  while (!program.at_end() && (rows == nullptr || pc < pc_end)) {
    uint8_t op = program.u8();
    uint8_t operand = op & cfa_op::kOperandMask;
    bool ok = true;
    switch (op & cfa_op::kCompactMask) {
      case cfa_op::kAdvanceLoc:
        ok = advance_by(operand);
        break;
      case cfa_op::kOffset:
        set_rule(operand, saved_at(factored(static_cast<int64_t>(program.uleb128()))));
        break;
      case cfa_op::kRestore:
        restore_rule(operand);
        break;
      default:
        switch (op) {
          case cfa_op::kNop:
            break;
          case cfa_op::kSetLoc:
            ok = advance_to(program.encoded_pointer(cie_.pointer_encoding));
            break;
          case cfa_op::kAdvanceLoc1:
            ok = advance_by(program.u8());
            break;
          case cfa_op::kAdvanceLoc2:
            ok = advance_by(program.u16());
            break;
          case cfa_op::kAdvanceLoc4:
            ok = advance_by(program.u32());
            break;
          case cfa_op::kOffsetExtended: {
            uint64_t reg = program.uleb128();
            set_rule(reg, saved_at(factored(static_cast<int64_t>(program.uleb128()))));
            break;
          }
          case cfa_op::kOffsetExtendedSf: {
            uint64_t reg = program.uleb128();
            set_rule(reg, saved_at(factored(program.sleb128())));
            break;
          }
          case cfa_op::kGnuNegativeOffsetExtended: {
            uint64_t reg = program.uleb128();
            set_rule(reg, saved_at(factored(static_cast<int64_t>(0 - program.uleb128()))));
            break;
          }
          case cfa_op::kRestoreExtended:
            restore_rule(program.uleb128());
            break;
          case cfa_op::kUndefined:
            set_rule(program.uleb128(), RegisterRule{RegisterRule::Kind::kUndefined});
            break;
          case cfa_op::kSameValue:
            set_rule(program.uleb128(), RegisterRule{RegisterRule::Kind::kSameValue});
            break;
          case cfa_op::kRegister:
          case cfa_op::kValOffset: {
            uint64_t reg = program.uleb128();
            program.uleb128();
            set_rule(reg, kOther);
            break;
          }
          case cfa_op::kValOffsetSf: {
            uint64_t reg = program.uleb128();
            program.sleb128();
            set_rule(reg, kOther);
            break;
          }
          case cfa_op::kExpression:
          case cfa_op::kValExpression: {
            uint64_t reg = program.uleb128();
            program.skip(program.uleb128());
            set_rule(reg, kOther);
            break;
          }
          case cfa_op::kRememberState:
            if (remembered_count == kMaxRememberedStates) return false;
            remembered[remembered_count++] = state;
            break;
          case cfa_op::kRestoreState:
            // The CFA rule comes back too: gcc's epilogues rely on it, as libgcc does.
            if (remembered_count == 0) return false;
            state = remembered[--remembered_count];
            break;
          case cfa_op::kDefCfa: {
            uint64_t reg = program.uleb128();
            state.cfa = CfaRule{CfaRule::Kind::kRegisterOffset, reg, static_cast<int64_t>(program.uleb128())};
            break;
          }
          case cfa_op::kDefCfaSf: {
            uint64_t reg = program.uleb128();
            state.cfa = CfaRule{CfaRule::Kind::kRegisterOffset, reg, factored(program.sleb128())};
            break;
          }
          case cfa_op::kDefCfaRegister:
            // Keeps the offset, which only a register-based CFA has.
            state.cfa.reg = program.uleb128();
            if (state.cfa.kind != CfaRule::Kind::kRegisterOffset) state.cfa.kind = CfaRule::Kind::kOther;
            break;
          case cfa_op::kDefCfaOffset:
          case cfa_op::kDefCfaOffsetSf:
            state.cfa.offset = op == cfa_op::kDefCfaOffset ? static_cast<int64_t>(program.uleb128())
                                                           : factored(program.sleb128());
            if (state.cfa.kind != CfaRule::Kind::kRegisterOffset) state.cfa.kind = CfaRule::Kind::kOther;
            break;
          case cfa_op::kDefCfaExpression:
            state.cfa = plt_stub_rule(program.take(program.uleb128()));
            break;
          case cfa_op::kGnuArgsSize:
            program.uleb128();  // only matters to landing pads
            break;
          default:
            return false;  // the operands' length is unknown, nothing after can be read
        }
    }
    if (!ok || !offsets_fit || !program.ok()) return false;
  }
  if (rows && pc < pc_end) rows->push_back({pc, state});
  return true;
}

}  // namespace nmprof::unwind
