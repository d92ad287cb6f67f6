// Runs DWARF call frame instructions (DWARF 5, section 6.4.2) and keeps the part of
// the unwind state a stack walk uses: the CFA rule and the rules of rbp, rsp and the
// return address column. Rules for other registers are parsed and dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/unwind/eh_frame_records.h"

namespace nmprof::unwind {

struct RegisterRule {
  enum class Kind : uint8_t { kSameValue, kUndefined, kSavedAtCfaOffset, kOther };
  Kind kind = Kind::kSameValue;
  int64_t offset = 0;  // kSavedAtCfaOffset: the caller's value is stored at CFA + offset

  bool operator==(const RegisterRule&) const = default;
};

struct CfaRule {
  // kPltStub is the expression ld emits for lazy-binding PLT entries:
  // CFA = rsp + offset + ((pc & 15) >= plt_threshold ? 8 : 0).
  enum class Kind : uint8_t { kUndefined, kRegisterOffset, kPltStub, kOther };
  Kind kind = Kind::kUndefined;
  uint64_t reg = 0;  // kRegisterOffset: CFA = reg + offset
  int64_t offset = 0;
  uint8_t plt_threshold = 0;

  bool operator==(const CfaRule&) const = default;
};

struct UnwindState {
  CfaRule cfa;
  RegisterRule rbp;
  RegisterRule rsp;  // unset: the caller's rsp is the CFA
  RegisterRule return_address{RegisterRule::Kind::kOther};  // unknown until the CIE says
};

// The state from `pc` up to the next row's pc (or the end of the FDE).
struct UnwindStateRow {
  uint64_t pc;
  UnwindState state;
};

class CfaProgram {
 public:
  // Runs the CIE's initial instructions; ok() is false if they are malformed.
  explicit CfaProgram(const CommonInformation& cie);
  bool ok() const { return ok_; }
  const CommonInformation& cie() const { return cie_; }

  // Replaces `rows` with the states over the FDE's range, in pc order. False when the
  // program is malformed or uses an instruction of unknown length.
  bool run(const FrameDescription& fde, std::vector<UnwindStateRow>& rows) const;

 private:
  bool execute(DwarfReader program, uint64_t pc, uint64_t pc_end, const UnwindState& restore_source,
               UnwindState& state, std::vector<UnwindStateRow>* rows) const;
  RegisterRule UnwindState::*tracked_register(uint64_t reg) const;

  CommonInformation cie_;
  UnwindState initial_;  // after the CIE's instructions: what DW_CFA_restore returns to
  bool ok_ = false;
};

}  // namespace nmprof::unwind
