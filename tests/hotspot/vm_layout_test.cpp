// VMStructs reading and layout resolution against the real tables of JDK 17's and
// JDK 25's libjvm.so, loaded into this process without starting a VM (the tables
// are static data), and against altered copies of them.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "agent/java/hotspot/vm_layout.h"
#include "agent/java/hotspot/vm_structs.h"

namespace nmprof::hotspot {
namespace {

void* load_libjvm(const std::string& jdk) {
  std::string path = jdk + "/lib/server/libjvm.so";
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}

// libjvm's symbols, with some replaced or hidden.
class Symbols {
 public:
  explicit Symbols(void* libjvm) : libjvm_(libjvm) {}

  void hide(const std::string& name) { overrides_[name] = nullptr; }
  void replace(const std::string& name, const void* value) { overrides_[name] = value; }
  uint64_t number(const char* name) const { return *static_cast<const uint64_t*>(dlsym(libjvm_, name)); }

  VmStructs::SymbolLookup lookup() const {
    return [this](const char* name) -> const void* {
      auto it = overrides_.find(name);
      return it != overrides_.end() ? it->second : dlsym(libjvm_, name);
    };
  }

 private:
  void* libjvm_;
  std::map<std::string, const void*> overrides_;
};

// A copy of gHotSpotVMStructs without the entry for type::field.
class StructsWithout {
 public:
  StructsWithout(const Symbols& symbols, void* libjvm, const char* type, const char* field) {
    uint64_t stride = symbols.number("gHotSpotVMStructEntryArrayStride");
    uint64_t type_at = symbols.number("gHotSpotVMStructEntryTypeNameOffset");
    uint64_t field_at = symbols.number("gHotSpotVMStructEntryFieldNameOffset");
    const char* entry = *static_cast<const char* const*>(dlsym(libjvm, "gHotSpotVMStructs"));
    for (;; entry += stride) {
      const char* entry_type;
      const char* entry_field;
      std::memcpy(&entry_type, entry + type_at, sizeof entry_type);
      std::memcpy(&entry_field, entry + field_at, sizeof entry_field);
      bool dropped = entry_type && entry_field && !std::strcmp(entry_type, type) && !std::strcmp(entry_field, field);
      if (!dropped) entries_.insert(entries_.end(), entry, entry + stride);
      if (!entry_type) break;  // the terminator is copied too
    }
    first_ = entries_.data();
  }
  // What gHotSpotVMStructs holds: a pointer to the first entry.
  const void* symbol() const { return &first_; }

 private:
  std::vector<char> entries_;
  const char* first_;
};

struct Jdk {
  int version;
  const char* home;
};

class VmLayoutTest : public ::testing::TestWithParam<Jdk> {
 protected:
  void SetUp() override {
    libjvm_ = load_libjvm(GetParam().home);
    if (!libjvm_) GTEST_SKIP() << "no libjvm.so in " << GetParam().home;
    symbols_.emplace(libjvm_);
  }

  // Why resolving with these symbols fails, or "" when it does not.
  std::string refusal(const Symbols& symbols) {
    VmLayout layout;
    std::string why_not;
    return resolve(symbols, &layout, &why_not) ? std::string() : why_not;
  }

  bool resolve(const Symbols& symbols, VmLayout* layout, std::string* why_not) {
    VmStructs vm;
    return vm.open(symbols.lookup(), why_not) && resolve_vm_layout(vm, layout, why_not);
  }

  void* libjvm_ = nullptr;
  std::optional<Symbols> symbols_;
};

TEST_P(VmLayoutTest, ReadsTheTables) {
  VmStructs vm;
  std::string why_not;
  ASSERT_TRUE(vm.open(symbols_->lookup(), &why_not)) << why_not;
  std::optional<VmField> anchor = vm.field("JavaThread", "_anchor");
  ASSERT_TRUE(anchor);
  EXPECT_FALSE(anchor->is_static);
  EXPECT_EQ(anchor->type_string, "JavaFrameAnchor");
  std::optional<VmField> heaps = vm.field("CodeCache", "_heaps");
  ASSERT_TRUE(heaps);
  EXPECT_TRUE(heaps->is_static);
  EXPECT_NE(heaps->address, 0u);
  EXPECT_EQ(vm.type("int").value_or(VmType{}).size, 4u);
  EXPECT_TRUE(vm.type("size_t").value_or(VmType{}).is_unsigned);
  EXPECT_FALSE(vm.type("intptr_t").value_or(VmType{true, true}).is_unsigned);
  EXPECT_EQ(vm.int_constant("_thread_in_native"), 4);
  EXPECT_FALSE(vm.field("JavaThread", "_no_such_field"));
  EXPECT_FALSE(vm.type("NoSuchType"));
  EXPECT_FALSE(vm.int_constant("no_such_constant"));
}

TEST_P(VmLayoutTest, ResolvesWhatTheClassifierNeeds) {
  VmLayout layout;
  std::string why_not;
  ASSERT_TRUE(resolve(*symbols_, &layout, &why_not)) << why_not;
  EXPECT_EQ(layout.jdk_version, GetParam().version);
  EXPECT_EQ(layout.entry_frame_call_wrapper_slot, -6);
  EXPECT_EQ(layout.interpreter_sender_sp_slot, -1);
  // Where JDK 25 differs from JDK 17.
  const bool jdk25 = GetParam().version == 25;
  EXPECT_EQ(layout.blob_kind.has_value(), jdk25);       // CodeBlob::_kind
  EXPECT_EQ(layout.immutable_data.has_value(), jdk25);  // debug info off the code cache
  EXPECT_EQ(layout.debug_ints_exclude_zero, jdk25);     // UNSIGNED5 without 0 bytes
  EXPECT_EQ(layout.code_begin.base, jdk25 ? AddressRef::Base::kBlob : AddressRef::Base::kNone);
  EXPECT_EQ(layout.deopt_handler.base, jdk25 ? AddressRef::Base::kBlob : AddressRef::Base::kNone);
  ASSERT_TRUE(layout.comp_level);
  EXPECT_EQ(layout.comp_level->size, jdk25 ? 1 : 4);  // CompLevel became a byte
  EXPECT_TRUE(layout.pc_offset.is_signed);  // the leading sentinel's offset is -1
}

TEST_P(VmLayoutTest, NamesAMissingSymbol) {
  Symbols symbols = *symbols_;
  symbols.hide("gHotSpotVMTypeEntrySizeOffset");
  EXPECT_EQ(refusal(symbols), "libjvm.so does not export gHotSpotVMTypeEntrySizeOffset");
}

TEST_P(VmLayoutTest, RefusesAnImplausibleEntryLayout) {
  Symbols symbols = *symbols_;
  const uint64_t stride = 4;  // smaller than the entries' members
  symbols.replace("gHotSpotVMStructEntryArrayStride", &stride);
  EXPECT_EQ(refusal(symbols), "implausible entry layout of gHotSpotVMStructs");
}

TEST_P(VmLayoutTest, NamesAMissingField) {
  Symbols symbols = *symbols_;
  StructsWithout structs(symbols, libjvm_, "JavaThread", "_anchor");
  symbols.replace("gHotSpotVMStructs", structs.symbol());
  EXPECT_EQ(refusal(symbols), "VMStructs has no usable JavaThread::_anchor");
}

TEST_P(VmLayoutTest, NamesTheAlternativeWhenNeitherFormIsThere) {
  // JDK 17 has CodeBlob::_code_begin, JDK 25 CodeBlob::_code_offset; without the
  // one it has, the other is reported missing.
  const bool pointers = GetParam().version == 17;
  Symbols symbols = *symbols_;
  StructsWithout structs(symbols, libjvm_, "CodeBlob", pointers ? "_code_begin" : "_code_offset");
  symbols.replace("gHotSpotVMStructs", structs.symbol());
  EXPECT_EQ(refusal(symbols), "VMStructs has no usable CodeBlob::_code_offset");
}

TEST_P(VmLayoutTest, DoesWithoutOptionalFields) {
  Symbols symbols = *symbols_;
  StructsWithout structs(symbols, libjvm_, "nmethod", "_comp_level");
  symbols.replace("gHotSpotVMStructs", structs.symbol());
  VmLayout layout;
  std::string why_not;
  ASSERT_TRUE(resolve(symbols, &layout, &why_not)) << why_not;
  EXPECT_FALSE(layout.comp_level);  // C1 frames are then plain "JIT compiled"
}

INSTANTIATE_TEST_SUITE_P(Jdks, VmLayoutTest,
                         ::testing::Values(Jdk{17, NMPROF_TEST_JDK17}, Jdk{25, NMPROF_TEST_JDK25}),
                         [](const auto& info) { return "Jdk" + std::to_string(info.param.version); });

}  // namespace
}  // namespace nmprof::hotspot
