#include "profile/source_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

#include <cerrno>
#include <ctime>

#include "formats/elf/elf_image.h"
#include "formats/mangling/demangle.h"
#include "profile/debug_file_search.h"
#include "profile/dwarf_units.h"
#include "profile/inlined_functions.h"

namespace nmprof::profile {
namespace {

char* debuginfo_path = nullptr;  // libdw's default: beside the file, .debug/, /usr/lib/debug

std::string build_id_text(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr where = 0;
  int size = dwfl_module_build_id(module, &bits, &where);
  if (size <= 0) return {};
  return elf::hex_text(std::as_bytes(std::span(bits, static_cast<size_t>(size))));
}

// libdw's search for a separate debug file, when it can find one on this machine or
// through the debuginfod servers the user configured (debug_file_search.h).
int find_debuginfo(Dwfl_Module* module, void** user_data, const char* name, GElf_Addr base, const char* file,
                   const char* debuglink, GElf_Word debuglink_crc, char** found) {
  DebugFiles local = debug_files_at(file ? file : name, debuglink ? debuglink : "", build_id_text(module));
  if (local == DebugFiles::NotRegular || (local == DebugFiles::None && !debuginfod_configured())) {
    errno = 0;  // libdw: not found, rather than an error
    return -1;
  }
  return dwfl_standard_find_debuginfo(module, user_data, name, base, file, debuglink, debuglink_crc, found);
}

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

// "16432 bytes, modified 2025-01-02 03:04:05.123456789 UTC"
std::string file_text(uint64_t size, int64_t modified_ns) {
  time_t seconds = static_cast<time_t>(modified_ns / 1'000'000'000);
  struct tm utc;
  char when[32] = "?";
  if (gmtime_r(&seconds, &utc)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &utc);
  char nanos[16];
  snprintf(nanos, sizeof nanos, ".%09lld", static_cast<long long>(modified_ns % 1'000'000'000));
  return std::to_string(size) + " bytes, modified " + when + nanos + " UTC";
}

// A function's name as its symbol would give it: the demangled linkage name, else
// its plain name (C), following DW_AT_abstract_origin and DW_AT_specification.
std::string function_name(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    const char* text = dwarf_attr_integrate(die, name, &attribute) ? dwarf_formstring(&attribute) : nullptr;
    if (text && *text) return symbols::demangle(text);
  }
  return "??";
}

// A file name of a unit's line table, absolute: a relative one (clang's DWARF 5)
// is relative to the directory the unit was compiled in.
std::string absolute(Dwarf_Die* unit, const char* file) {
  Dwarf_Attribute attribute;
  const char* directory = *file == '/' ? nullptr : dwarf_formstring(dwarf_attr(unit, DW_AT_comp_dir, &attribute));
  return directory ? std::string(directory) + "/" + file : std::string(file);
}

// Where an inlined function was inlined: DW_AT_call_file and DW_AT_call_line.
SourceLine call_location(Dwarf_Die* inlined) {
  SourceLine where;
  Dwarf_Attribute attribute;
  Dwarf_Word file = 0, line = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attribute), &line) == 0)
    where.line = static_cast<int32_t>(line);
  Dwarf_Die unit;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &file) == 0 &&
      dwarf_diecu(inlined, &unit, nullptr, nullptr) && dwarf_getsrcfiles(&unit, &files, &count) == 0 && file < count) {
    const char* name = dwarf_filesrc(files, file, nullptr, nullptr);
    if (name) where.file = absolute(&unit, name);
  }
  return where;
}

}  // namespace

// One Dwfl session per file, so that each file's addresses are its own link-time ones.
struct SourceLines::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  // Its DWARF, or a debug file's, is looked for when a line is first asked for, not
  // for its build id: inflating a compressed debug file is the slow part of reading.
  bool dwarf_looked_for = false;
  std::optional<DwarfUnits> units;  // when found
  InlinedFunctions inlined;

  DwarfUnits* dwarf() {
    if (!dwarf_looked_for) {
      dwarf_looked_for = true;
      Dwarf_Addr bias = 0;  // where libdw placed the file; its DWARF's addresses are link-time ones
      if (Dwarf* found = dwfl_module_getdwarf(module, &bias)) units.emplace(found);
    }
    return units ? &*units : nullptr;
  }

  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

SourceLines::SourceLines() = default;
SourceLines::~SourceLines() = default;

SourceLines::Module* SourceLines::module(const std::string& path) {
  auto [it, added] = modules_.try_emplace(path);
  if (!added) return it->second.get();
  // Not a FIFO put where a library was, which libdw's open would wait on forever.
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  auto m = std::make_unique<Module>();
  m->dwfl = dwfl_begin(&kOfflineCallbacks);
  if (!m->dwfl) return nullptr;
  m->module = dwfl_report_offline(m->dwfl, path.c_str(), path.c_str(), -1);
  dwfl_report_end(m->dwfl, nullptr, nullptr);
  if (!m->module) return nullptr;
  it->second = std::move(m);
  return it->second.get();
}

// The file's build id when the module was recorded with one, else its size and
// modification time (a copy keeps its mtime with cp -p, rsync -t or a package; a
// rebuild or an edit does not). A separate debug file is checked by libdw against
// the file it belongs to: its build id, or the CRC of its debuglink.
bool SourceLines::is_recorded_build(const std::string& name, const ModuleFile& recorded) {
  if (recorded.ambiguous) {
    if (ambiguous_.insert(name).second)
      warnings_.push_back(name + ": different builds or files were loaded under this name (a library rebuilt and "
                          "loaded again?): no source lines for its frames");
    return false;
  }
  if (!recorded.identified) return true;  // recorded before nmprof said which build it was: as before
  auto [verdict, added] =
      verdicts_.try_emplace({recorded.path, recorded.build_id, recorded.file_size, recorded.file_modified_ns}, true);
  if (!added) return verdict->second;
  std::string difference;
  struct stat st;
  if (!recorded.build_id.empty()) {
    std::string found = build_id(recorded.path);
    if (found != recorded.build_id && module(recorded.path))
      difference = "is not the build that was recorded (build id " + recorded.build_id + " recorded, " +
                   (found.empty() ? "none" : found) + " on disk)";
  } else if (recorded.file_size == 0) {
    difference = "has no build id, and the recording lacks its size and mtime (it could not be read when loaded)";
  } else if (stat(recorded.path.c_str(), &st) == 0) {
    int64_t modified = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    if (static_cast<uint64_t>(st.st_size) != recorded.file_size || modified != recorded.file_modified_ns)
      difference = "is not the build that was recorded (no build id; recorded " +
                   file_text(recorded.file_size, recorded.file_modified_ns) + ", on disk " +
                   file_text(static_cast<uint64_t>(st.st_size), modified) + ")";
  }
  if (!difference.empty()) {
    verdict->second = false;
    warnings_.push_back(name + ": " + recorded.path + " " + difference + ": no source lines for its frames");
  }
  return verdict->second;
}

std::optional<CallSite> SourceLines::call_site(const std::string& name, const ModuleFile& recorded,
                                               uint64_t return_address) {
  if (recorded.path.empty() || return_address == 0 || !is_recorded_build(name, recorded)) return std::nullopt;
  auto [cached, added] = cache_.try_emplace({recorded.path, return_address});
  if (!added) return cached->second;
  Module* m = module(recorded.path);
  DwarfUnits* units = m ? m->dwarf() : nullptr;
  if (!units) return std::nullopt;
  // The call instruction ends just before the return address.
  Dwarf_Addr address = return_address - 1;
  std::optional<Dwarf_Die> unit = units->at(address);
  Dwarf_Line* line = unit ? dwarf_getsrc_die(&*unit, address) : nullptr;
  int number = 0;
  const char* file = line ? dwarf_linesrc(line, nullptr, nullptr) : nullptr;
  if (!file || dwarf_lineno(line, &number) != 0 || number <= 0) return std::nullopt;
  CallSite site{{absolute(&*unit, file), number}, {}};
  // Each function inlined there, innermost first, was inlined at a line of the next
  // one out, up to the function itself.
  for (Dwarf_Die& inlined : m->inlined.at(&*unit, address)) {
    site.inlined.push_back({function_name(&inlined), site.line});
    site.line = call_location(&inlined);
  }
  cached->second = std::move(site);
  return cached->second;
}

std::optional<std::string> SourceLines::function_at(const std::string& name, const ModuleFile& recorded,
                                                    uint64_t return_address) {
  if (recorded.path.empty() || return_address == 0 || !is_recorded_build(name, recorded)) return std::nullopt;
  auto [cached, added] = functions_.try_emplace({recorded.path, return_address});
  if (!added) return cached->second;
  Module* m = module(recorded.path);
  Dwarf_Addr bias = 0;  // where libdw placed the file: its symbols are looked up there
  if (!m || !dwfl_module_getelf(m->module, &bias)) return std::nullopt;
  GElf_Sym symbol;
  GElf_Off offset = 0;
  const char* found =
      dwfl_module_addrinfo(m->module, return_address - 1 + bias, &offset, &symbol, nullptr, nullptr, nullptr);
  if (found && *found && GELF_ST_TYPE(symbol.st_info) == STT_FUNC) cached->second = symbols::demangle(found);
  return cached->second;
}

std::string SourceLines::build_id(const std::string& path) {
  Module* m = path.empty() ? nullptr : module(path);
  return m ? build_id_text(m->module) : std::string();
}

}  // namespace nmprof::profile
