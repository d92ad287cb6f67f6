#include "agent/java/hotspot/vm_structs.h"

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>

namespace nmprof::hotspot {
namespace {

// No table has nearly this many entries; a missing terminator stops here.
constexpr int kMaxEntries = 1 << 16;
// Entries are a few pointers and integers.
constexpr uint64_t kMaxStride = 256;

template <typename T>
T member(const char* entry, uint64_t offset) {
  T value;
  std::memcpy(&value, entry + offset, sizeof value);
  return value;
}

std::string_view string_member(const char* entry, uint64_t offset) {
  const char* s = member<const char*>(entry, offset);
  return s ? std::string_view(s) : std::string_view();
}

// Calls visit(entry) for each entry until it returns true or the table ends.
template <typename Visit>
void scan(const char* entries, uint64_t stride, uint64_t name_offset, Visit visit) {
  for (int i = 0; entries && i < kMaxEntries; i++) {
    const char* entry = entries + i * stride;
    if (member<const char*>(entry, name_offset) == nullptr || visit(entry)) return;
  }
}

class LayoutReader {
 public:
  LayoutReader(const VmStructs::SymbolLookup& lookup, std::string* why_not) : lookup_(lookup), why_not_(why_not) {}

  // The value of an exported uint64_t such as gHotSpotVMStructEntryArrayStride.
  uint64_t number(const char* symbol) {
    const void* p = lookup_(symbol);
    if (!p) return fail(symbol);
    uint64_t value;
    std::memcpy(&value, p, sizeof value);
    return value;
  }
  // The table an exported pointer such as gHotSpotVMStructs points at.
  const char* table(const char* symbol) {
    const void* p = lookup_(symbol);
    if (!p) return fail(symbol), nullptr;
    const char* entries;
    std::memcpy(&entries, p, sizeof entries);
    if (!entries) fail(symbol);
    return entries;
  }
  struct Member {
    uint64_t offset;
    uint64_t size;
  };
  // Every member must lie within the stride.
  void check(const char* table, uint64_t stride, std::initializer_list<Member> members) {
    bool ok = stride > 0 && stride <= kMaxStride && stride % alignof(void*) == 0;
    for (Member m : members) ok = ok && m.offset <= stride && m.size <= stride - m.offset;
    if (!ok && !failed_) {
      failed_ = true;
      if (why_not_) *why_not_ = std::string("implausible entry layout of ") + table;
    }
  }
  bool failed() const { return failed_; }

 private:
  uint64_t fail(const char* symbol) {
    if (!failed_) {
      failed_ = true;
      if (why_not_) *why_not_ = std::string("libjvm.so does not export ") + symbol;
    }
    return 0;
  }

  const VmStructs::SymbolLookup& lookup_;
  std::string* why_not_;
  bool failed_ = false;
};

}  // namespace

VmStructs::SymbolLookup VmStructs::libjvm_symbols() {
  return [](const char* name) -> const void* {
    // The JVM keeps libjvm loaded: the handle only finds it (by its soname).
    void* libjvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
    if (!libjvm) return nullptr;
    const void* symbol = dlsym(libjvm, name);
    dlclose(libjvm);
    return symbol;
  };
}

bool VmStructs::open(const SymbolLookup& lookup, std::string* why_not) {
  LayoutReader r(lookup, why_not);
  StructTable s;
  s.entries = r.table("gHotSpotVMStructs");
  s.stride = r.number("gHotSpotVMStructEntryArrayStride");
  s.type_name = r.number("gHotSpotVMStructEntryTypeNameOffset");
  s.field_name = r.number("gHotSpotVMStructEntryFieldNameOffset");
  s.type_string = r.number("gHotSpotVMStructEntryTypeStringOffset");
  s.is_static = r.number("gHotSpotVMStructEntryIsStaticOffset");
  s.offset = r.number("gHotSpotVMStructEntryOffsetOffset");
  s.address = r.number("gHotSpotVMStructEntryAddressOffset");
  TypeTable t;
  t.entries = r.table("gHotSpotVMTypes");
  t.stride = r.number("gHotSpotVMTypeEntryArrayStride");
  t.type_name = r.number("gHotSpotVMTypeEntryTypeNameOffset");
  t.size = r.number("gHotSpotVMTypeEntrySizeOffset");
  t.is_unsigned = r.number("gHotSpotVMTypeEntryIsUnsignedOffset");
  ConstantTable ints;
  ints.entries = r.table("gHotSpotVMIntConstants");
  ints.stride = r.number("gHotSpotVMIntConstantEntryArrayStride");
  ints.name = r.number("gHotSpotVMIntConstantEntryNameOffset");
  ints.value = r.number("gHotSpotVMIntConstantEntryValueOffset");
  if (r.failed()) return false;
  constexpr uint64_t kPointer = sizeof(void*);
  r.check("gHotSpotVMStructs", s.stride,
          {{s.type_name, kPointer}, {s.field_name, kPointer}, {s.type_string, kPointer},
           {s.is_static, sizeof(int32_t)}, {s.offset, sizeof(uint64_t)}, {s.address, kPointer}});
  r.check("gHotSpotVMTypes", t.stride,
          {{t.type_name, kPointer}, {t.size, sizeof(uint64_t)}, {t.is_unsigned, sizeof(int32_t)}});
  r.check("gHotSpotVMIntConstants", ints.stride, {{ints.name, kPointer}, {ints.value, sizeof(int32_t)}});
  if (r.failed()) return false;
  structs_ = s;
  types_ = t;
  ints_ = ints;
  return true;
}

std::optional<VmField> VmStructs::field(std::string_view type, std::string_view name) const {
  const StructTable& s = structs_;
  std::optional<VmField> found;
  scan(s.entries, s.stride, s.type_name, [&](const char* entry) {
    if (string_member(entry, s.type_name) != type || string_member(entry, s.field_name) != name) return false;
    found = VmField{string_member(entry, s.type_string), member<int32_t>(entry, s.is_static) != 0,
                    member<uint64_t>(entry, s.offset), member<uintptr_t>(entry, s.address)};
    return true;
  });
  return found;
}

std::optional<VmType> VmStructs::type(std::string_view name) const {
  std::optional<VmType> found;
  scan(types_.entries, types_.stride, types_.type_name, [&](const char* entry) {
    if (string_member(entry, types_.type_name) != name) return false;
    found = VmType{member<uint64_t>(entry, types_.size), member<int32_t>(entry, types_.is_unsigned) != 0};
    return true;
  });
  return found;
}

std::optional<int32_t> VmStructs::int_constant(std::string_view name) const {
  std::optional<int32_t> found;
  scan(ints_.entries, ints_.stride, ints_.name, [&](const char* entry) {
    if (string_member(entry, ints_.name) != name) return false;
    found = member<int32_t>(entry, ints_.value);
    return true;
  });
  return found;
}

}  // namespace nmprof::hotspot
