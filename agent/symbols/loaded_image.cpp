#include "agent/symbols/loaded_image.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <span>

#include "formats/elf/elf_image.h"

namespace nmprof::symbols {
namespace {

// Sizes past these are damage, not a symbol table.
constexpr size_t kMaxSymbols = size_t{1} << 24;
constexpr size_t kMaxStrings = size_t{1} << 28;
constexpr size_t kMaxBuckets = size_t{1} << 24;

// Copies `size` bytes at `address` of this process; false where nothing is mapped.
bool copy_memory(uintptr_t address, size_t size, std::vector<std::byte>& out) {
  out.resize(size);
  if (size == 0) return true;
  iovec local{out.data(), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

template <typename T>
std::optional<T> copy_value(uintptr_t address) {
  std::vector<std::byte> bytes;
  if (!copy_memory(address, sizeof(T), bytes)) return std::nullopt;
  return elf::read_at<T>(bytes, 0);
}

// The number of symbols, from DT_GNU_HASH: the last bucket's chain ends at the last symbol.
std::optional<size_t> count_by_gnu_hash(uintptr_t table) {
  struct Header {
    uint32_t buckets, first_symbol, bloom_words, bloom_shift;
  };
  auto header = copy_value<Header>(table);
  if (!header || header->buckets > kMaxBuckets || header->bloom_words > kMaxBuckets) return std::nullopt;
  uintptr_t buckets_at = table + sizeof(Header) + header->bloom_words * sizeof(uint64_t);
  std::vector<std::byte> buckets;
  if (!copy_memory(buckets_at, header->buckets * sizeof(uint32_t), buckets)) return std::nullopt;
  uint32_t last = 0;
  for (size_t i = 0; i < header->buckets; i++)
    last = std::max(last, *elf::read_at<uint32_t>(buckets, i * sizeof(uint32_t)));
  if (last < header->first_symbol) return header->first_symbol;
  uintptr_t chains_at = buckets_at + header->buckets * sizeof(uint32_t);
  for (size_t symbol = last; symbol < kMaxSymbols; symbol++) {
    auto hash = copy_value<uint32_t>(chains_at + (symbol - header->first_symbol) * sizeof(uint32_t));
    if (!hash) return std::nullopt;
    if (*hash & 1) return symbol + 1;  // the low bit ends a chain
  }
  return std::nullopt;
}

// Whether [start, start + size) lies in a segment the module maps readable.
bool mapped(const dl_phdr_info& info, uintptr_t start, size_t size) {
  for (int i = 0; i < info.dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    uintptr_t begin = info.dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && start >= begin && start - begin <= ph.p_memsz &&
        size <= ph.p_memsz - (start - begin))
      return true;
  }
  return false;
}

}  // namespace

LoadedImage LoadedImage::of(const dl_phdr_info& info) {
  LoadedImage image;
  image.bias = info.dlpi_addr;
  image.begin = UINTPTR_MAX;
  for (int i = 0; i < info.dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    uintptr_t start = info.dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      image.begin = std::min(image.begin, start);
      image.end = std::max(image.end, start + ph.p_memsz);
    } else if (ph.p_type == PT_DYNAMIC) {
      image.dynamic = start;
      image.dynamic_size = ph.p_memsz;
    }
  }
  return image;
}

namespace {

std::span<const std::byte> loaded_note(const dl_phdr_info& info, std::string_view name, uint32_t type) {
  for (int i = 0; i < info.dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    uintptr_t start = info.dlpi_addr + ph.p_vaddr;
    if (ph.p_type != PT_NOTE || !mapped(info, start, ph.p_memsz)) continue;
    std::span notes(reinterpret_cast<const std::byte*>(start), ph.p_memsz);
    auto note = elf::find_note(notes, ph.p_align == 8 ? 8 : 4, name, type);
    if (!note.empty()) return note;
  }
  return {};
}

}  // namespace

std::string loaded_build_id(const dl_phdr_info& info) { return elf::hex_text(loaded_note(info, "GNU", NT_GNU_BUILD_ID)); }

bool has_loaded_note(const dl_phdr_info& info, std::string_view name, uint32_t type) {
  return !loaded_note(info, name, type).empty();
}

std::optional<LoadedSymbols> LoadedSymbols::copy(const LoadedImage& image, std::string* error) {
  std::vector<std::byte> dynamic;
  if (image.dynamic == 0 || !copy_memory(image.dynamic, image.dynamic_size, dynamic)) {
    *error = "no dynamic section in memory";
    return std::nullopt;
  }
  // The loader rewrites most of these to runtime addresses in place, but not all of
  // them and not in every image: a value inside the image is one already.
  auto runtime = [&image](uint64_t value) { return value >= image.begin && value < image.end ? value : value + image.bias; };
  uintptr_t symbols = 0, strings = 0, versions = 0, hash = 0, gnu_hash = 0;
  size_t strings_size = 0;
  for (size_t at = 0; auto entry = elf::read_at<Elf64_Dyn>(dynamic, at); at += sizeof(Elf64_Dyn)) {
    if (entry->d_tag == DT_NULL) break;
    uint64_t value = entry->d_un.d_val;
    switch (entry->d_tag) {
      case DT_SYMTAB: symbols = runtime(value); break;
      case DT_STRTAB: strings = runtime(value); break;
      case DT_STRSZ: strings_size = value; break;
      case DT_VERSYM: versions = runtime(value); break;
      case DT_HASH: hash = runtime(value); break;
      case DT_GNU_HASH: gnu_hash = runtime(value); break;
      default: break;
    }
  }
  std::optional<size_t> count;
  if (hash) {
    if (auto words = copy_value<std::array<uint32_t, 2>>(hash)) count = (*words)[1];  // nbucket, nchain
  } else if (gnu_hash) {
    count = count_by_gnu_hash(gnu_hash);
  }
  LoadedSymbols out;
  out.code_end_ = image.end - image.bias;
  if (!symbols || !strings || !count || *count > kMaxSymbols || strings_size > kMaxStrings ||
      !copy_memory(symbols, *count * sizeof(Elf64_Sym), out.symbols_) ||
      !copy_memory(strings, strings_size, out.strings_) ||
      (versions && !copy_memory(versions, *count * sizeof(uint16_t), out.versions_))) {
    *error = "no readable dynamic symbol table in memory";
    return std::nullopt;
  }
  return out;
}

SymbolTableData LoadedSymbols::table() const {
  return {{symbols_, strings_, versions_}, [end = code_end_](const Elf64_Sym& symbol) {
            bool defined = symbol.st_shndx != SHN_UNDEF && symbol.st_shndx < SHN_LORESERVE;
            return defined ? std::optional<uint64_t>(end) : std::nullopt;
          }};
}

}  // namespace nmprof::symbols
