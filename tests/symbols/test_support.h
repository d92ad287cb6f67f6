// Helpers shared by the symbolizer tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "agent/symbols/loaded_image.h"

namespace nmprof::symbols::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The loaded module that contains `address`, as dl_iterate_phdr reports it: what the
// agent will pass to the symbolizer. The main program's empty name becomes /proc/self/exe.
struct LoadedModule {
  std::string path;
  uintptr_t load_bias;
  LoadedImage image;
  std::string build_id;  // read in memory, hex
};
std::optional<LoadedModule> module_containing(const void* address);

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace nmprof::symbols::testing
