// File and line of native code, looked up when a recording is read (never in the
// agent): the DWARF line table of the module's file, or of its separate debug file
// found by build id or debuglink under the usual debug directories, through
// elfutils' libdw. Answers are cached per file and address. Also the file's build id.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace nmprof::profile {

struct SourceLine {
  std::string file;  // as the compiler recorded it, usually absolute
  int32_t line = 0;
};

class SourceLines {
 public:
  SourceLines();
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  // The line of the call before `return_address` (a link-time address in the ELF file
  // at `path`); nothing when the file or its line table is missing.
  std::optional<SourceLine> call_site(const std::string& path, uint64_t return_address);
  // The GNU build id of the file, in hex; "" when it has none or cannot be read.
  std::string build_id(const std::string& path);

 private:
  struct Module;
  Module* module(const std::string& path);

  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;  // null: not a readable ELF file
  std::map<std::pair<std::string, uint64_t>, std::optional<SourceLine>> cache_;
};

}  // namespace nmprof::profile
