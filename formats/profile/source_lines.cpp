#include "formats/profile/source_lines.h"

#include <elfutils/libdwfl.h>

namespace nmprof::profile {
namespace {

char* debuginfo_path = nullptr;  // libdw's default: beside the file, .debug/, /usr/lib/debug

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

}  // namespace

// One Dwfl session per file, so that each file's addresses are its own link-time ones.
struct SourceLines::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Dwarf_Addr bias = 0;  // where libdw placed the file: its address = link-time address + bias
  bool has_lines = false;  // its DWARF, or a debug file's, was found

  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

SourceLines::SourceLines() = default;
SourceLines::~SourceLines() = default;

SourceLines::Module* SourceLines::module(const std::string& path) {
  auto [it, added] = modules_.try_emplace(path);
  if (!added) return it->second.get();
  auto m = std::make_unique<Module>();
  m->dwfl = dwfl_begin(&kOfflineCallbacks);
  if (!m->dwfl) return nullptr;
  m->module = dwfl_report_offline(m->dwfl, path.c_str(), path.c_str(), -1);
  dwfl_report_end(m->dwfl, nullptr, nullptr);
  if (!m->module) return nullptr;
  m->has_lines = dwfl_module_getdwarf(m->module, &m->bias) != nullptr;
  it->second = std::move(m);
  return it->second.get();
}

std::optional<SourceLine> SourceLines::call_site(const std::string& path, uint64_t return_address) {
  if (path.empty() || return_address == 0) return std::nullopt;
  auto [cached, added] = cache_.try_emplace({path, return_address});
  if (!added) return cached->second;
  Module* m = module(path);
  if (!m || !m->has_lines) return std::nullopt;
  // The call instruction ends just before the return address.
  Dwfl_Line* line = dwfl_module_getsrc(m->module, return_address - 1 + m->bias);
  int number = 0;
  const char* file = line ? dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr) : nullptr;
  if (file && number > 0) cached->second = SourceLine{file, number};
  return cached->second;
}

std::string SourceLines::build_id(const std::string& path) {
  Module* m = path.empty() ? nullptr : module(path);
  const unsigned char* bits = nullptr;
  GElf_Addr where = 0;
  int size = m ? dwfl_module_build_id(m->module, &bits, &where) : 0;
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < size; i++) {
    hex += kDigits[bits[i] >> 4];
    hex += kDigits[bits[i] & 15];
  }
  return hex;
}

}  // namespace nmprof::profile
