// Resolving pcs in real modules: the test library (full, stripped, with separate
// debug files), libc, the vDSO, and PIE and non-PIE executables.
#include "agent/symbols/symbol_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "agent/symbols/vdso.h"
#include "tests/symbols/test_support.h"
#include "tests/symbols/testlib.h"

namespace nmprof::symbols {
namespace {

namespace fs = std::filesystem;
using testing::module_containing;
using testing::TempDir;

struct ExpectedName {
  TestlibFunction function;
  const char* with_symtab;  // from .symtab, demangled (checked against c++filt)
  const char* exported;     // from .dynsym only; nullptr for functions that are not exported
};

constexpr ExpectedName kExpectedNames[] = {
    {kCGlobal, "c_global_function", "c_global_function"},
    {kCStatic, "c_static_function", nullptr},
    {kWeakAlias, "testlib_entry", "testlib_entry"},
    {kLocalAlias, "zzz_exported_target", "zzz_exported_target"},
    {kVersioned, "__new_name", "__new_name"},
    {kCxxMember, "geometry::Vec2::length() const", "geometry::Vec2::length() const"},
    {kCxxOperator, "geometry::operator+(geometry::Vec2 const&, geometry::Vec2 const&)",
     "geometry::operator+(geometry::Vec2 const&, geometry::Vec2 const&)"},
    {kCxxFunctionTemplate, "int geometry::twice<int>(int)", "int geometry::twice<int>(int)"},
    {kCxxClassTemplate, "geometry::Box<long>::unwrap(geometry::Box<long> const&, long)",
     "geometry::Box<long>::unwrap(geometry::Box<long> const&, long)"},
    {kCxxStatic, "file_local(int)", nullptr},
    {kCxxAnonymous, "(anonymous namespace)::anonymous_helper(int)", nullptr},
};

const fs::path kTestlibDir = TESTLIB_DIR;

// The test library, dlopen'ed once: its functions' runtime addresses and load bias.
class Testlib {
 public:
  static const Testlib& get() {
    static Testlib testlib;
    return testlib;
  }
  uint64_t link_time_address(TestlibFunction function) const {
    return reinterpret_cast<uintptr_t>(function_(function)) - load_bias_;
  }

 private:
  Testlib() {
    void* handle = dlopen(TESTLIB_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(dlerror());
    function_ = reinterpret_cast<const void* (*)(int)>(dlsym(handle, "testlib_function"));
    load_bias_ = module_containing(function_(kCGlobal))->load_bias;
  }
  const void* (*function_)(int);
  uintptr_t load_bias_;
};

std::unique_ptr<SymbolTable> load(const fs::path& path, const fs::path& debug_root = "/nonexistent") {
  std::string error;
  auto table = SymbolTable::from_file(path, &error, debug_root);
  EXPECT_NE(table, nullptr) << error;
  return table;
}

// Each function resolves from its first to its last byte, to its name or, with
// `exported_only`, to its .dynsym name or nothing.
void expect_testlib_names(SymbolTable& table, bool exported_only) {
  for (const ExpectedName& expected : kExpectedNames) {
    uint64_t address = Testlib::get().link_time_address(expected.function);
    const char* name = exported_only ? expected.exported : expected.with_symtab;
    SCOPED_TRACE(expected.with_symtab);
    auto symbol = table.find(address);
    if (name == nullptr) {
      EXPECT_FALSE(symbol) << "resolved to " << symbol->name;
      continue;
    }
    ASSERT_TRUE(symbol);
    EXPECT_EQ(symbol->name, name);
    EXPECT_EQ(symbol->start, address);
    ASSERT_GT(symbol->size, 1u);
    auto last_byte = table.find(address + symbol->size - 1);
    ASSERT_TRUE(last_byte);
    EXPECT_EQ(last_byte->name, name);
    auto past_end = table.find(address + symbol->size);
    if (past_end) {
      EXPECT_NE(past_end->name, name);
    }
  }
}

TEST(SymbolTable, ResolvesFunctionsFromSymtab) {
  auto table = load(TESTLIB_PATH);
  ASSERT_TRUE(table);
  expect_testlib_names(*table, false);
}

TEST(SymbolTable, StrippedLibraryResolvesOnlyExportedNames) {
  auto table = load(kTestlibDir / "testlib_stripped.so");
  ASSERT_TRUE(table);
  expect_testlib_names(*table, true);
}

TEST(SymbolTable, LoadsImageInMemory) {
  std::string image = testing::read_file(TESTLIB_PATH);
  std::string error;
  auto table = SymbolTable::from_memory(std::as_bytes(std::span(image)), &error);
  ASSERT_TRUE(table) << error;
  expect_testlib_names(*table, false);
}

TEST(SymbolTable, AddressesOutsideEveryFunctionHaveNoName) {
  auto table = load(TESTLIB_PATH);
  ASSERT_TRUE(table);
  EXPECT_FALSE(table->find(0));
  EXPECT_FALSE(table->find(UINT64_MAX));
}

TEST(SymbolTable, RepeatedLookupsReturnTheCachedName) {
  auto table = load(TESTLIB_PATH);
  ASSERT_TRUE(table);
  uint64_t address = Testlib::get().link_time_address(kCxxMember);
  std::string_view first = table->find(address)->name;
  std::string_view second = table->find(address + 1)->name;
  EXPECT_EQ(first, "geometry::Vec2::length() const");
  EXPECT_EQ(first.data(), second.data());
}

// A stripped copy whose separate debug file lies where gdb would look for it.
class DebugFileLayout : public ::testing::Test {
 protected:
  fs::path install(const fs::path& stripped_name, const fs::path& directory) {
    fs::create_directories(directory);
    fs::copy_file(kTestlibDir / stripped_name, directory / "libtest.so");
    return directory / "libtest.so";
  }
  void install_debug_file(const fs::path& path) {
    fs::create_directories(path.parent_path());
    fs::copy_file(kTestlibDir / "testlib.debug", path);
  }
  fs::path debug_root() const { return temp_.path() / "debug-root"; }

  TempDir temp_;
};

TEST_F(DebugFileLayout, FindsDebugLinkInSameDirectory) {
  fs::path library = install("testlib_debuglinked.so", temp_.path() / "lib");
  install_debug_file(temp_.path() / "lib" / "testlib.debug");
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, false);
}

TEST_F(DebugFileLayout, FindsDebugLinkInDotDebugDirectory) {
  fs::path library = install("testlib_debuglinked.so", temp_.path() / "lib");
  install_debug_file(temp_.path() / "lib" / ".debug" / "testlib.debug");
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, false);
}

TEST_F(DebugFileLayout, FindsDebugLinkUnderDebugRoot) {
  fs::path library = install("testlib_debuglinked.so", temp_.path() / "lib");
  install_debug_file(debug_root() / fs::path(library.parent_path()).relative_path() / "testlib.debug");
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, false);
}

TEST_F(DebugFileLayout, IgnoresDebugLinkWithWrongCrc) {
  fs::path library = install("testlib_debuglinked.so", temp_.path() / "lib");
  fs::path debug = temp_.path() / "lib" / "testlib.debug";
  install_debug_file(debug);
  std::ofstream(debug, std::ios::app) << "changed";  // still a valid ELF file, with another CRC
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, true);
}

TEST_F(DebugFileLayout, FindsDebugFileByBuildId) {
  std::string id = TESTLIB_BUILD_ID;
  fs::path library = install("testlib_stripped.so", temp_.path() / "lib");
  install_debug_file(debug_root() / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug"));
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, false);
}

TEST_F(DebugFileLayout, IgnoresBuildIdPathHoldingAnotherBuild) {
  std::string id = TESTLIB_BUILD_ID;
  fs::path library = install("testlib_stripped.so", temp_.path() / "lib");
  fs::path impostor = debug_root() / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
  fs::create_directories(impostor.parent_path());
  fs::copy_file("/proc/self/exe", impostor);  // an ELF file with symbols, but another build-id
  auto table = load(library, debug_root());
  ASSERT_TRUE(table);
  expect_testlib_names(*table, true);
}

// libc's malloc is also __libc_malloc, free also __libc_free, and so on.
void expect_libc_names(const fs::path& debug_root) {
  for (const char* name : {"malloc", "free", "calloc", "realloc"}) {
    void* address = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(address, nullptr);
    auto module = module_containing(address);
    ASSERT_TRUE(module);
    auto table = load(module->path, debug_root);
    ASSERT_TRUE(table);
    auto symbol = table->find(reinterpret_cast<uintptr_t>(address) - module->load_bias);
    ASSERT_TRUE(symbol) << name;
    EXPECT_EQ(symbol->name, name);
  }
}

TEST(SymbolTable, ResolvesLibcFunctions) { expect_libc_names(kSystemDebugRoot); }

TEST(SymbolTable, ResolvesLibcFunctionsFromDynsym) { expect_libc_names("/nonexistent"); }

TEST(SymbolTable, ResolvesVdsoFromMemory) {
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO";
  void* clock_gettime = dlsym(vdso, "__vdso_clock_gettime");
  ASSERT_NE(clock_gettime, nullptr);
  auto module = module_containing(clock_gettime);
  ASSERT_TRUE(module);

  std::string error;
  auto table = SymbolTable::from_memory(vdso_image(), &error);
  ASSERT_TRUE(table) << error;
  uint64_t address = reinterpret_cast<uintptr_t>(clock_gettime) - module->load_bias;
  auto symbol = table->find(address + 1);
  ASSERT_TRUE(symbol);
  EXPECT_EQ(symbol->name, "clock_gettime");  // the weak public alias of __vdso_clock_gettime
  EXPECT_EQ(symbol->start, address);
}

// The module of a function, as the agent finds it in memory.
testing::LoadedModule loaded(const void* function) {
  auto module = module_containing(function);
  if (!module) throw std::runtime_error("no module");
  return *module;
}

TEST(LoadedImage, BuildIdIsTheFilesBuildId) {
  void* handle = dlopen(TESTLIB_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(loaded(dlsym(handle, "testlib_function")).build_id, TESTLIB_BUILD_ID);
  auto libc = loaded(dlsym(RTLD_DEFAULT, "malloc"));
  std::string file = testing::read_file(libc.path), error;
  auto image = elf::ElfImage::parse(std::as_bytes(std::span(file)), &error);
  ASSERT_TRUE(image) << error;
  EXPECT_EQ(libc.build_id, elf::hex_text(image->build_id()));
  EXPECT_EQ(libc.build_id.size(), 40u);
}

// An ELF file without program headers (a relocatable object, or one the fuzzer
// made): its segments are none. Copying zero of them from a null vector was
// undefined behaviour, which UBSan reported in the fuzz build.
TEST(ElfImage, AFileWithoutProgramHeadersHasNoSegments) {
  std::string file(sizeof(Elf64_Ehdr), '\0');
  auto* header = reinterpret_cast<Elf64_Ehdr*>(file.data());
  std::memcpy(header->e_ident, ELFMAG, SELFMAG);
  header->e_ident[EI_CLASS] = ELFCLASS64;
  header->e_ident[EI_DATA] = ELFDATA2LSB;
  header->e_phentsize = sizeof(Elf64_Phdr);
  header->e_phoff = sizeof(Elf64_Ehdr);  // at the end: zero headers fit
  std::string error;
  auto image = elf::ElfImage::parse(std::as_bytes(std::span(file)), &error, elf::ElfImage::Sections::Optional);
  ASSERT_TRUE(image) << error;
  EXPECT_TRUE(image->segments().empty());
}

// What a module whose file is another build is named from. The test library has a
// DT_GNU_HASH table only; libc and the vDSO (below) a DT_HASH one too.
TEST(SymbolTable, LoadedImageNamesTheExportedFunctions) {
  void* handle = dlopen(TESTLIB_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  std::string error;
  auto table = SymbolTable::from_loaded_image(loaded(dlsym(handle, "testlib_function")).image, &error);
  ASSERT_TRUE(table) << error;
  expect_testlib_names(*table, true);
}

TEST(SymbolTable, LoadedImagesOfLibcAndTheVdso) {
  for (const char* name : {"malloc", "free", "calloc", "realloc"}) {
    void* address = dlsym(RTLD_DEFAULT, name);
    auto libc = loaded(address);
    std::string error;
    auto table = SymbolTable::from_loaded_image(libc.image, &error);
    ASSERT_TRUE(table) << error;
    auto symbol = table->find(reinterpret_cast<uintptr_t>(address) - libc.load_bias);
    ASSERT_TRUE(symbol) << name;
    EXPECT_EQ(symbol->name, name);
  }
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO";
  void* clock_gettime = dlsym(vdso, "__vdso_clock_gettime");
  auto module = loaded(clock_gettime);
  std::string error;
  auto table = SymbolTable::from_loaded_image(module.image, &error);
  ASSERT_TRUE(table) << error;
  auto symbol = table->find(reinterpret_cast<uintptr_t>(clock_gettime) - module.load_bias + 1);
  ASSERT_TRUE(symbol);
  EXPECT_EQ(symbol->name, "clock_gettime");
}

// An image unloaded meanwhile is memory that is no longer mapped: an error, no fault.
TEST(SymbolTable, LoadedImageThatIsNotMappedIsAnError) {
  long page = sysconf(_SC_PAGESIZE);
  void* gone = mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  munmap(gone, static_cast<size_t>(page));
  LoadedImage image;
  image.begin = reinterpret_cast<uintptr_t>(gone);
  image.end = image.begin + static_cast<uintptr_t>(page);
  image.dynamic = image.begin;
  image.dynamic_size = 256;
  std::string error;
  EXPECT_FALSE(SymbolTable::from_loaded_image(image, &error));
  EXPECT_FALSE(error.empty());
}

TEST(SymbolTable, LoadedFileIsReadOnlyWhenItIsTheBuildLoaded) {
  std::string error;
  bool replaced = true;
  ImageIdentity loaded_build{TESTLIB_BUILD_ID};
  auto table = SymbolTable::from_loaded_file({TESTLIB_PATH, TESTLIB_PATH, loaded_build}, &error, &replaced);
  ASSERT_TRUE(table) << error;
  EXPECT_FALSE(replaced);
  expect_testlib_names(*table, false);

  ImageIdentity another{"0123456789abcdef0123456789abcdef01234568"};
  EXPECT_FALSE(SymbolTable::from_loaded_file({TESTLIB_PATH, TESTLIB_PATH, another}, &error, &replaced));
  EXPECT_TRUE(replaced);
  EXPECT_EQ(error, "build id 0123456789abcdef0123456789abcdef01234568 when loaded, " TESTLIB_BUILD_ID " now");
}

// Without a build id, the file must be the one first seen: same device, inode, size
// and mtime.
TEST(SymbolTable, LoadedFileWithoutBuildIdIsCheckedByItsStatus) {
  TempDir temp;
  fs::path copy = temp.path() / "libtest.so";
  fs::copy_file(TESTLIB_PATH, copy);
  struct stat first;
  ASSERT_EQ(stat(copy.c_str(), &first), 0);
  ImageIdentity loaded_file = ImageIdentity::of_file(first, "");
  std::string error;
  bool replaced = true;
  EXPECT_TRUE(SymbolTable::from_loaded_file({copy, copy, loaded_file}, &error, &replaced)) << error;
  EXPECT_FALSE(replaced);

  struct timespec later[2] = {{0, UTIME_OMIT}, {first.st_mtim.tv_sec + 1, first.st_mtim.tv_nsec}};
  ASSERT_EQ(utimensat(AT_FDCWD, copy.c_str(), later, 0), 0);  // rewritten in place
  EXPECT_FALSE(SymbolTable::from_loaded_file({copy, copy, loaded_file}, &error, &replaced));
  EXPECT_TRUE(replaced);
  EXPECT_NE(error.find("no build id"), std::string::npos) << error;

  fs::path other = temp.path() / "other.so";
  fs::copy_file(TESTLIB_PATH, other);
  fs::rename(other, copy);  // another inode, renamed over it
  struct timespec same[2] = {{0, UTIME_OMIT}, first.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, copy.c_str(), same, 0), 0);
  EXPECT_FALSE(SymbolTable::from_loaded_file({copy, copy, loaded_file}, &error, &replaced));
  EXPECT_TRUE(replaced);

  ImageIdentity unknown;  // neither build id nor file: never matched
  EXPECT_FALSE(SymbolTable::from_loaded_file({copy, copy, unknown}, &error, &replaced));
}

int pie_probe(int x) { return x * 7; }

TEST(SymbolTable, ResolvesInPieExecutable) {
  auto module = module_containing(reinterpret_cast<const void*>(&pie_probe));
  ASSERT_TRUE(module);
  ASSERT_NE(module->load_bias, 0u);
  auto table = load(module->path);
  ASSERT_TRUE(table);
  auto symbol = table->find(reinterpret_cast<uintptr_t>(&pie_probe) - module->load_bias);
  ASSERT_TRUE(symbol);
  EXPECT_EQ(symbol->name, "nmprof::symbols::(anonymous namespace)::pie_probe(int)");
}

TEST(SymbolTable, ResolvesInNonPieExecutable) {
  std::string image = testing::read_file(NONPIE_PROGRAM_PATH);
  ASSERT_GE(image.size(), sizeof(Elf64_Ehdr));
  EXPECT_EQ(reinterpret_cast<const Elf64_Ehdr*>(image.data())->e_type, ET_EXEC);

  FILE* program = popen(NONPIE_PROGRAM_PATH, "r");
  ASSERT_NE(program, nullptr);
  void* global_function = nullptr;
  void* static_function = nullptr;
  int fields = fscanf(program, "%p %p", &global_function, &static_function);
  pclose(program);
  ASSERT_EQ(fields, 2);

  auto table = load(NONPIE_PROGRAM_PATH);
  ASSERT_TRUE(table);
  auto global_symbol = table->find(reinterpret_cast<uintptr_t>(global_function));  // load bias 0
  auto static_symbol = table->find(reinterpret_cast<uintptr_t>(static_function));
  ASSERT_TRUE(global_symbol);
  ASSERT_TRUE(static_symbol);
  EXPECT_EQ(global_symbol->name, "nonpie_global_function");
  EXPECT_EQ(static_symbol->name, "nonpie_static_function");
}

}  // namespace
}  // namespace nmprof::symbols
