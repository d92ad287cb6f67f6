// HotSpot's VMStructs: the tables of field offsets, type sizes and constants that
// libjvm exports for the Serviceability Agent (gHotSpotVMStructs, gHotSpotVMTypes,
// gHotSpotVMIntConstants; the frame classifier needs nothing from the long
// constants). The layout of their entries is read from libjvm's exported
// gHotSpotVM*Entry*Offset and *ArrayStride symbols, never assumed. Used at setup
// only: every lookup scans a table.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nmprof::hotspot {

struct VmField {
  std::string_view type_string;  // the field's C++ type as VMStructs spells it
  bool is_static = false;
  uint64_t offset = 0;    // instance fields: bytes from the object's start
  uintptr_t address = 0;  // static fields: where the value is
};

struct VmType {
  uint64_t size = 0;
  bool is_unsigned = false;
};

class VmStructs {
 public:
  // Finds an exported libjvm symbol's address, or nullptr.
  using SymbolLookup = std::function<const void*(const char* name)>;
  // Looks symbols up in the loaded libjvm.so.
  static SymbolLookup libjvm_symbols();

  // Locates the four tables and their entry layouts; false (with the reason) if a
  // symbol is missing or a layout is implausible.
  bool open(const SymbolLookup& lookup, std::string* why_not);

  std::optional<VmField> field(std::string_view type, std::string_view name) const;
  std::optional<VmType> type(std::string_view name) const;
  std::optional<int32_t> int_constant(std::string_view name) const;

 private:
  // A table's entries start at `entries`, `stride` bytes apart; the first entry whose
  // name is null ends it. The other members are offsets within an entry.
  struct StructTable {
    const char* entries = nullptr;
    uint64_t stride, type_name, field_name, type_string, is_static, offset, address;
  };
  struct TypeTable {
    const char* entries = nullptr;
    uint64_t stride, type_name, size, is_unsigned;
  };
  struct ConstantTable {
    const char* entries = nullptr;
    uint64_t stride, name, value;
  };

  StructTable structs_{};
  TypeTable types_{};
  ConstantTable ints_{};
};

}  // namespace nmprof::hotspot
