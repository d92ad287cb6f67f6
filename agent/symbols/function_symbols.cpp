#include "agent/symbols/function_symbols.h"

#include <algorithm>

namespace nmprof::symbols {

namespace {

// .gnu.version's bit for a version that is not the default one (binutils names it VERSYM_HIDDEN).
constexpr uint16_t kVersionHidden = 0x8000;

struct Candidate {
  FunctionSymbol symbol;
  uint64_t section_end;  // bounds a zero-size symbol
  bool exported;
  bool default_version;
  bool global;
};

size_t leading_underscores(std::string_view name) {
  size_t n = name.find_first_not_of('_');
  return n == std::string_view::npos ? name.size() : n;
}

// The header's alias rules: true if `a` is the more useful name for an address.
bool more_useful(const Candidate& a, const Candidate& b) {
  if (a.exported != b.exported) return a.exported;
  if (a.default_version != b.default_version) return a.default_version;
  size_t a_underscores = leading_underscores(a.symbol.name);
  size_t b_underscores = leading_underscores(b.symbol.name);
  if (a_underscores != b_underscores) return a_underscores < b_underscores;
  if (a.global != b.global) return a.global;
  return a.symbol.name < b.symbol.name;
}

std::vector<Candidate> read_candidates(const SymbolTableData& table) {
  std::vector<Candidate> candidates;
  size_t count = table.entries.symbols.size() / sizeof(Elf64_Sym);
  for (size_t i = 1; i < count; ++i) {
    Elf64_Sym symbol = *elf::read_at<Elf64_Sym>(table.entries.symbols, i * sizeof(Elf64_Sym));
    int kind = ELF64_ST_TYPE(symbol.st_info);
    if (kind != STT_FUNC && kind != STT_GNU_IFUNC) continue;
    std::optional<uint64_t> code_end = table.code_end(symbol);
    if (!code_end) continue;

    std::string_view name = elf::string_at(table.entries.strings, symbol.st_name);
    bool default_version = true;
    if (size_t at = name.find('@'); at != std::string_view::npos) {  // .symtab spells versions name@VER, name@@VER
      default_version = name.substr(at).starts_with("@@");
      name = name.substr(0, at);
    }
    auto version = elf::read_at<uint16_t>(table.entries.versions, i * sizeof(uint16_t));
    if (version && (*version & kVersionHidden)) default_version = false;
    if (name.empty()) continue;

    int binding = ELF64_ST_BIND(symbol.st_info);
    candidates.push_back({{symbol.st_value, symbol.st_size, name}, *code_end, binding != STB_LOCAL, default_version,
                          binding == STB_GLOBAL});
  }
  return candidates;
}

}  // namespace

std::vector<FunctionSymbol> read_function_symbols(const elf::ElfImage& image, uint32_t type) {
  std::optional<elf::SymbolSection> table = image.symbol_section(type);
  if (!table) return {};
  auto code_end = [&image](const Elf64_Sym& symbol) {
    const Elf64_Shdr* section = image.section(symbol.st_shndx);  // nullptr for undefined, SHN_ABS and the like
    return section ? std::optional<uint64_t>(section->sh_addr + section->sh_size) : std::nullopt;
  };
  return read_function_symbols({*table, code_end});
}

std::vector<FunctionSymbol> read_function_symbols(const SymbolTableData& table) {
  std::vector<Candidate> candidates = read_candidates(table);
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.symbol.start != b.symbol.start) return a.symbol.start < b.symbol.start;
    return more_useful(a, b);
  });

  std::vector<FunctionSymbol> functions;
  for (size_t first = 0, end; first < candidates.size(); first = end) {
    FunctionSymbol symbol = candidates[first].symbol;  // the most useful alias
    for (end = first + 1; end < candidates.size() && candidates[end].symbol.start == symbol.start; ++end) {
      symbol.size = std::max(symbol.size, candidates[end].symbol.size);
    }
    if (symbol.size == 0) {
      uint64_t limit = candidates[first].section_end;
      if (end < candidates.size()) limit = std::min(limit, candidates[end].symbol.start);
      if (limit > symbol.start) symbol.size = limit - symbol.start;
    }
    if (symbol.size > 0) functions.push_back(symbol);
  }
  return functions;
}

}  // namespace nmprof::symbols
