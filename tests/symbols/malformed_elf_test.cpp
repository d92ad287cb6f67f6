// Files that are not well-formed ELF64 give errors, and damaged ones never crash.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "agent/symbols/symbol_table.h"
#include "tests/symbols/test_support.h"

namespace nmprof::symbols {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

class MalformedElf : public ::testing::Test {
 protected:
  // Loads `bytes` written to a file; returns the error, or "" if it loaded.
  std::string load_error(const std::string& bytes) {
    fs::path path = temp_.path() / "module.so";
    testing::write_file(path, bytes);
    std::string error;
    auto table = SymbolTable::from_file(path, &error, temp_.path() / "no-debug");
    if (table) {
      for (uint64_t address = 0; address < 0x4000; address += 7) table->find(address);
      return "";
    }
    EXPECT_FALSE(error.empty());
    return error;
  }

  const std::string testlib_ = testing::read_file(TESTLIB_PATH);
  TempDir temp_;
};

TEST_F(MalformedElf, MissingFileIsAnError) {
  std::string error;
  EXPECT_FALSE(SymbolTable::from_file((temp_.path() / "missing.so").string(), &error));
  EXPECT_NE(error.find("missing.so"), std::string::npos) << error;
}

TEST_F(MalformedElf, DirectoryIsAnError) {
  std::string error;
  EXPECT_FALSE(SymbolTable::from_file(temp_.path().string(), &error));
  EXPECT_FALSE(error.empty());
}

TEST_F(MalformedElf, EmptyAndGarbageFilesAreErrors) {
  EXPECT_NE(load_error(""), "");
  EXPECT_NE(load_error("#!/bin/sh\necho not an ELF file\n"), "");
  std::mt19937 random(1);
  std::string garbage(8192, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  EXPECT_NE(load_error(garbage), "");
  EXPECT_NE(load_error(std::string(ELFMAG) + garbage), "");
}

TEST_F(MalformedElf, TruncatedFilesAreErrors) {
  ASSERT_GT(testlib_.size(), 4096u);
  // The section header table is at the end, so any truncation loses part of it.
  for (size_t length : {size_t{4}, size_t{16}, sizeof(Elf64_Ehdr) - 1, sizeof(Elf64_Ehdr), size_t{1000},
                        testlib_.size() / 2, testlib_.size() - 1}) {
    SCOPED_TRACE(length);
    EXPECT_NE(load_error(testlib_.substr(0, length)), "");
  }
}

TEST_F(MalformedElf, Elf32IsAnError) {
  std::string elf32 = testlib_;
  elf32[EI_CLASS] = ELFCLASS32;
  EXPECT_NE(load_error(elf32).find("ELF64"), std::string::npos);
}

TEST_F(MalformedElf, SectionPastEndOfFileIsAnError) {
  std::string damaged = testlib_;
  Elf64_Ehdr header;
  std::memcpy(&header, damaged.data(), sizeof header);
  Elf64_Shdr section;
  size_t last = header.e_shoff + (header.e_shnum - 1) * sizeof(Elf64_Shdr);
  std::memcpy(&section, damaged.data() + last, sizeof section);
  section.sh_type = SHT_PROGBITS;
  section.sh_offset = damaged.size() - 8;
  section.sh_size = 16;
  std::memcpy(damaged.data() + last, &section, sizeof section);
  EXPECT_NE(load_error(damaged).find("out of bounds"), std::string::npos);
}

// Random damage to the headers, symbols and strings: each load either fails with an
// error or gives a table whose lookups work. (Run under ASan/valgrind to see more.)
TEST_F(MalformedElf, RandomDamageNeverCrashes) {
  Elf64_Ehdr header;
  std::memcpy(&header, testlib_.data(), sizeof header);
  std::mt19937 random(42);
  for (int round = 0; round < 300; ++round) {
    std::string damaged = testlib_;
    for (int flip = 0; flip < 8; ++flip) {
      // Half the damage goes to the section header table, the rest anywhere.
      size_t table_size = header.e_shnum * sizeof(Elf64_Shdr);
      size_t at = flip % 2 == 0 ? header.e_shoff + random() % table_size : random() % damaged.size();
      damaged[at] = static_cast<char>(random());
    }
    load_error(damaged);
  }
}

}  // namespace
}  // namespace nmprof::symbols
