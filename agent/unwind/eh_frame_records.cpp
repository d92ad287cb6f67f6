#include "agent/unwind/eh_frame_records.h"

namespace nmprof::unwind {

std::optional<EhFrameEntry> read_eh_frame_entry(const uint8_t* at, const uint8_t* section_end) {
  if (at == nullptr || at >= section_end) return std::nullopt;
  DwarfReader reader(at, section_end);
  uint64_t length = reader.u32();
  if (length == 0xffffffff) length = reader.u64();  // 64-bit DWARF; the id stays 4 bytes in .eh_frame
  if (!reader.ok() || length < 4 || length > reader.remaining()) return std::nullopt;
  DwarfReader entry = reader.take(length);
  auto id_field = reinterpret_cast<uintptr_t>(entry.position());
  uint32_t id = entry.u32();
  return EhFrameEntry{id, id_field, entry};
}

std::optional<CommonInformation> parse_cie(EhFrameEntry entry) {
  DwarfReader& body = entry.body;
  uint8_t version = body.u8();
  if (version != 1 && version != 3 && version != 4) return std::nullopt;

  const uint8_t* augmentation = body.position();
  size_t augmentation_length = strnlen(reinterpret_cast<const char*>(augmentation), body.remaining());
  body.skip(augmentation_length + 1);
  if (version == 4) {
    uint8_t address_size = body.u8();
    uint8_t segment_selector_size = body.u8();
    if (address_size != 8 || segment_selector_size != 0) return std::nullopt;
  }

  CommonInformation cie;
  cie.code_alignment = body.uleb128();
  cie.data_alignment = body.sleb128();
  cie.return_address_register = version == 1 ? body.u8() : body.uleb128();
  if (!body.ok()) return std::nullopt;

  if (augmentation_length > 0) {
    // Without 'z' there is no way to skip what an augmentation adds.
    if (augmentation[0] != 'z') return std::nullopt;
    cie.has_augmentation_data = true;
    DwarfReader data = body.take(body.uleb128());
    for (size_t i = 1; i < augmentation_length; ++i) {
      char letter = static_cast<char>(augmentation[i]);
      if (letter == 'R') {
        cie.pointer_encoding = data.u8();
      } else if (letter == 'P') {
        uint8_t encoding = data.u8();
        data.encoded_pointer(encoding & ~eh_pe::kIndirect);
      } else if (letter == 'L') {
        data.u8();  // the LSDA pointer itself sits in each FDE's augmentation block
      } else if (letter == 'S') {
        cie.signal_frame = true;
      } else {
        break;  // 'z' lets unknown letters go: their data is inside the sized block
      }
    }
    if (!data.ok()) return std::nullopt;
  }
  // Indirect or function-relative pc addresses make no sense for code.
  uint8_t application = cie.pointer_encoding & eh_pe::kApplicationMask;
  if ((cie.pointer_encoding & eh_pe::kIndirect) || application == eh_pe::kFuncrel) return std::nullopt;
  if (!body.ok() || cie.code_alignment == 0) return std::nullopt;
  cie.initial_instructions = body;
  return cie;
}

std::optional<FrameDescription> parse_fde(EhFrameEntry entry, const CommonInformation& cie) {
  DwarfReader& body = entry.body;
  FrameDescription fde;
  fde.pc_begin = body.encoded_pointer(cie.pointer_encoding);
  uint64_t range = body.encoded_pointer(cie.pointer_encoding & eh_pe::kFormatMask);
  if (cie.has_augmentation_data) body.skip(body.uleb128());
  if (!body.ok() || fde.pc_begin + range < fde.pc_begin) return std::nullopt;
  fde.pc_end = fde.pc_begin + range;
  fde.instructions = body;
  return fde;
}

}  // namespace nmprof::unwind
