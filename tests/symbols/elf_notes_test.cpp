// Notes found by owner name and type, as the build id and Go's note are read.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/elf/elf_image.h"

namespace nmprof::elf {
namespace {

// Appends a note: n_namesz counts `name`'s bytes as given (padding NULs included).
void add_note(std::vector<std::byte>& notes, std::string name, uint32_t type, std::string desc) {
  Elf64_Nhdr header{static_cast<Elf64_Word>(name.size()), static_cast<Elf64_Word>(desc.size()), type};
  auto put = [&notes](const void* data, size_t size) {
    const auto* bytes = static_cast<const std::byte*>(data);
    notes.insert(notes.end(), bytes, bytes + size);
    notes.resize((notes.size() + 3) & ~size_t{3});
  };
  put(&header, sizeof header);
  put(name.data(), name.size());
  put(desc.data(), desc.size());
}

std::string text(std::span<const std::byte> bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

TEST(ElfNotes, FoundByOwnerAndTypeWhateverTheNamesPadding) {
  std::vector<std::byte> notes;
  add_note(notes, std::string("Gopher\0", 7), 4, "not go");
  add_note(notes, std::string("GNU\0", 4), NT_GNU_BUILD_ID, "abcd");
  add_note(notes, std::string("Go\0\0", 4), 4, "go build id");  // as the Go linker writes it
  EXPECT_EQ(text(find_note(notes, 4, "Go", 4)), "go build id");
  EXPECT_EQ(text(find_build_id(notes, 4)), "abcd");
  EXPECT_TRUE(find_note(notes, 4, "Go", 3).empty());
  EXPECT_TRUE(find_note(notes, 4, "G", 4).empty());
}

TEST(ElfNotes, ANoteCutShortIsNotFound) {
  std::vector<std::byte> notes;
  add_note(notes, std::string("Go\0\0", 4), 4, "go build id");
  notes.resize(notes.size() - 8);
  EXPECT_TRUE(find_note(notes, 4, "Go", 4).empty());
  std::vector<std::byte> unterminated;
  add_note(unterminated, "Go", 4, "id");
  EXPECT_TRUE(find_note(unterminated, 4, "Go", 4).empty());
}

}  // namespace
}  // namespace nmprof::elf
