// The records of .eh_frame (Linux Standard Base, "Exception Frames"): a CIE holds
// what many functions share, an FDE the unwind program of one pc range.
#pragma once

#include <cstdint>
#include <optional>

#include "agent/unwind/dwarf_reader.h"

namespace nmprof::unwind {

// One length-prefixed entry with its length and id fields read.
struct EhFrameEntry {
  uint32_t id;              // 0 for a CIE; in an FDE the distance back from this field to its CIE
  uintptr_t id_field;       // where the id was read
  DwarfReader body;         // the bytes after the id

  bool is_cie() const { return id == 0; }
  uintptr_t cie_address() const { return id_field - id; }
};

struct CommonInformation {
  uint64_t code_alignment = 0;
  int64_t data_alignment = 0;
  uint64_t return_address_register = 0;
  uint8_t pointer_encoding = eh_pe::kAbsptr;  // of FDE pc ranges and DW_CFA_set_loc
  bool has_augmentation_data = false;         // 'z': each FDE carries a sized block to skip
  bool signal_frame = false;                  // 'S'
  DwarfReader initial_instructions;
};

struct FrameDescription {
  uint64_t pc_begin = 0;
  uint64_t pc_end = 0;
  DwarfReader instructions;
};

// Reads the entry at `at`, which must end by `section_end`. Nothing for the
// zero-length terminator or a malformed length.
std::optional<EhFrameEntry> read_eh_frame_entry(const uint8_t* at, const uint8_t* section_end);

// Nothing for an unsupported version or augmentation, or a malformed body.
std::optional<CommonInformation> parse_cie(EhFrameEntry entry);
std::optional<FrameDescription> parse_fde(EhFrameEntry entry, const CommonInformation& cie);

}  // namespace nmprof::unwind
