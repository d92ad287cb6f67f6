// File and line of native code, looked up when a recording is read (never in the
// agent): the DWARF of the module's file, or of its separate debug file found by
// build id or debuglink under the usual debug directories, through elfutils' libdw.
// Each address gets its line and the chain of functions inlined there. A file is
// only read when it is the build the recording was made with (ModuleFile); a module
// whose file is another build gets one warning and no lines. Answers are cached per
// file and address. Also the file's build id, and the function its symbols name at
// an address the agent could not name (a file it could not reach: a process that
// chrooted itself).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profile/profile.h"

namespace nmprof::profile {

struct SourceLine {
  std::string file;  // as the compiler recorded it, usually absolute
  int32_t line = 0;
};

// A function the compiler inlined, and the line in it of the code at an address.
struct InlinedCall {
  std::string function;  // demangled
  SourceLine line;
};

// What the code before a return address was compiled from.
struct CallSite {
  // The line in the function the address's symbol names: of the call, or when that
  // call is in inlined code, of where the outermost inlined function was inlined.
  SourceLine line;
  std::vector<InlinedCall> inlined;  // innermost first
};

class SourceLines {
 public:
  SourceLines();
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  // The call before `return_address` (a link-time address in `module`, named `name`);
  // nothing when its file, or its line table, is missing or is not the recorded build.
  std::optional<CallSite> call_site(const std::string& name, const ModuleFile& module, uint64_t return_address);
  // The function (demangled) whose symbol holds the call before `return_address`, from
  // the file's symbol table or its debug file's; nothing under the same conditions.
  std::optional<std::string> function_at(const std::string& name, const ModuleFile& module, uint64_t return_address);
  // The GNU build id of the file, in hex; "" when it has none or cannot be read.
  std::string build_id(const std::string& path);
  // One line per module whose file is not the build that was recorded.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Module;
  Module* module(const std::string& path);
  bool is_recorded_build(const std::string& name, const ModuleFile& module);

  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;  // null: not a readable ELF file
  std::map<std::pair<std::string, uint64_t>, std::optional<CallSite>> cache_;
  std::map<std::pair<std::string, uint64_t>, std::optional<std::string>> functions_;
  // Whether a file is the build a module was recorded as, by path and build id, or
  // size and mtime.
  std::map<std::tuple<std::string, std::string, uint64_t, int64_t>, bool> verdicts_;
  std::set<std::string> ambiguous_;  // modules warned about
  std::vector<std::string> warnings_;
};

}  // namespace nmprof::profile
