#include "tests/unwind/readelf_oracle.h"

#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

namespace nmprof::unwind::test {
namespace {

std::vector<std::string> command_lines(const std::string& command) {
  std::vector<std::string> lines;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return lines;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe.get())) {
    std::string line(buffer);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> result;
  for (std::string word; stream >> word;) result.push_back(word);
  return result;
}

uint64_t hex(const std::string& text) { return std::stoull(text, nullptr, 16); }

}  // namespace

std::vector<ReadelfFde> readelf_eh_frame(const std::string& path) {
  std::vector<ReadelfFde> fdes;
  std::map<std::string, ReadelfRow> cie_rows;  // by CIE offset
  bool in_eh_frame = false;
  std::string entry_offset;                    // of the CIE or FDE being read
  std::string fde_cie;                         // empty while reading a CIE
  std::vector<std::string> columns;
  ReadelfFde* fde = nullptr;

  auto finish_entry = [&] {
    if (fde && fde->rows.empty() && cie_rows.count(fde_cie)) {
      fde->rows.push_back(cie_rows[fde_cie]);
      fde->rows.back().pc = fde->pc_begin;
    }
    fde = nullptr;
    entry_offset.clear();
  };

  for (const std::string& line : command_lines("readelf --debug-dump=frames-interp '" + path + "' 2>/dev/null")) {
    if (line.starts_with("Contents of the ")) {
      finish_entry();
      in_eh_frame = line.find(" .eh_frame section") != std::string::npos;
      continue;
    }
    if (!in_eh_frame) continue;
    std::vector<std::string> parts = words(line);
    if (parts.empty()) {
      finish_entry();
    } else if (parts.size() >= 4 && (parts[3] == "CIE" || parts[3] == "FDE")) {
      finish_entry();
      entry_offset = parts[0];
      fde_cie.clear();
      if (parts[3] == "FDE" && parts.size() >= 6 && parts[4].starts_with("cie=") && parts[5].starts_with("pc=")) {
        fde_cie = parts[4].substr(4);
        std::string range = parts[5].substr(3);
        size_t dots = range.find("..");
        fdes.push_back(ReadelfFde{hex(range.substr(0, dots)), hex(range.substr(dots + 2)), {}});
        fde = &fdes.back();
      }
    } else if (parts[0] == "LOC") {
      columns.assign(parts.begin() + 1, parts.end());
    } else if (!entry_offset.empty() && parts.size() == columns.size() + 1) {
      ReadelfRow row;
      row.pc = hex(parts[0]);
      for (size_t i = 0; i < columns.size(); ++i) {
        const std::string& value = parts[i + 1];
        if (columns[i] == "CFA") row.cfa = value;
        if (columns[i] == "rbp") row.rbp = value;
        if (columns[i] == "rsp") row.rsp = value;
        if (columns[i] == "ra") row.ra = value;
      }
      if (fde) {
        fde->rows.push_back(row);
      } else if (fde_cie.empty()) {
        cie_rows.emplace(entry_offset, row);
      }
    }
  }
  finish_entry();
  return fdes;
}

std::optional<ElfSection> readelf_section(const std::string& path, const std::string& name) {
  // "  [12] .plt  PROGBITS  0000000000026000 026000 000360 10  AX  0   0 16"
  for (const std::string& line : command_lines("readelf --section-headers --wide '" + path + "' 2>/dev/null")) {
    size_t close = line.find(']');
    if (line.find('[') == std::string::npos || close == std::string::npos) continue;
    std::vector<std::string> parts = words(line.substr(close + 1));
    if (parts.size() >= 5 && parts[0] == name) return ElfSection{hex(parts[2]), hex(parts[4])};
  }
  return std::nullopt;
}

}  // namespace nmprof::unwind::test
