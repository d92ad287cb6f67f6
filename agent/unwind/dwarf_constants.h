// The DWARF numbers the unwinder reads: .eh_frame pointer encodings, call frame
// instructions, the few expression operators of the PLT stub rule, and x86-64
// register numbers (System V psABI, figure "DWARF Register Number Mapping").
#pragma once

#include <cstdint>

namespace nmprof::unwind {

// DW_EH_PE_*: low nibble is the value format, bits 4-6 what it is relative to.
namespace eh_pe {
constexpr uint8_t kAbsptr = 0x00;
constexpr uint8_t kUleb128 = 0x01;
constexpr uint8_t kUdata2 = 0x02;
constexpr uint8_t kUdata4 = 0x03;
constexpr uint8_t kUdata8 = 0x04;
constexpr uint8_t kSleb128 = 0x09;
constexpr uint8_t kSdata2 = 0x0a;
constexpr uint8_t kSdata4 = 0x0b;
constexpr uint8_t kSdata8 = 0x0c;
constexpr uint8_t kFormatMask = 0x0f;

constexpr uint8_t kPcrel = 0x10;
constexpr uint8_t kTextrel = 0x20;
constexpr uint8_t kDatarel = 0x30;
constexpr uint8_t kFuncrel = 0x40;
constexpr uint8_t kAligned = 0x50;
constexpr uint8_t kApplicationMask = 0x70;

constexpr uint8_t kIndirect = 0x80;
constexpr uint8_t kOmit = 0xff;
}  // namespace eh_pe

// DW_CFA_*: the top two bits select the three compact forms that carry an operand.
namespace cfa_op {
constexpr uint8_t kAdvanceLoc = 0x40;  // | delta
constexpr uint8_t kOffset = 0x80;      // | register, ULEB factored offset
constexpr uint8_t kRestore = 0xc0;     // | register
constexpr uint8_t kCompactMask = 0xc0;
constexpr uint8_t kOperandMask = 0x3f;

constexpr uint8_t kNop = 0x00;
constexpr uint8_t kSetLoc = 0x01;
constexpr uint8_t kAdvanceLoc1 = 0x02;
constexpr uint8_t kAdvanceLoc2 = 0x03;
constexpr uint8_t kAdvanceLoc4 = 0x04;
constexpr uint8_t kOffsetExtended = 0x05;
constexpr uint8_t kRestoreExtended = 0x06;
constexpr uint8_t kUndefined = 0x07;
constexpr uint8_t kSameValue = 0x08;
constexpr uint8_t kRegister = 0x09;
constexpr uint8_t kRememberState = 0x0a;
constexpr uint8_t kRestoreState = 0x0b;
constexpr uint8_t kDefCfa = 0x0c;
constexpr uint8_t kDefCfaRegister = 0x0d;
constexpr uint8_t kDefCfaOffset = 0x0e;
constexpr uint8_t kDefCfaExpression = 0x0f;
constexpr uint8_t kExpression = 0x10;
constexpr uint8_t kOffsetExtendedSf = 0x11;
constexpr uint8_t kDefCfaSf = 0x12;
constexpr uint8_t kDefCfaOffsetSf = 0x13;
constexpr uint8_t kValOffset = 0x14;
constexpr uint8_t kValOffsetSf = 0x15;
constexpr uint8_t kValExpression = 0x16;
constexpr uint8_t kGnuArgsSize = 0x2e;
constexpr uint8_t kGnuNegativeOffsetExtended = 0x2f;
}  // namespace cfa_op

// DW_OP_* in the CFA expression ld writes for lazy-binding PLT stubs.
namespace expr_op {
constexpr uint8_t kAnd = 0x1a;
constexpr uint8_t kPlus = 0x22;
constexpr uint8_t kShl = 0x24;
constexpr uint8_t kGe = 0x2a;
constexpr uint8_t kLit0 = 0x30;
constexpr uint8_t kLit3 = 0x33;
constexpr uint8_t kLit15 = 0x3f;
constexpr uint8_t kBreg0 = 0x70;
}  // namespace expr_op

namespace x86_64_reg {
constexpr uint64_t kRbp = 6;
constexpr uint64_t kRsp = 7;
constexpr uint64_t kReturnAddress = 16;
}  // namespace x86_64_reg

}  // namespace nmprof::unwind
