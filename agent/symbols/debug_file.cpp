#include "agent/symbols/debug_file.h"

#include <algorithm>
#include <array>

namespace nmprof::symbols {

namespace {

// The CRC-32 (polynomial 0xEDB88320, as zlib) that .gnu_debuglink records.
constexpr std::array<uint32_t, 256> kCrcTable = [] {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
    table[i] = crc;
  }
  return table;
}();

uint32_t crc32(std::span<const std::byte> bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (std::byte b : bytes) crc = kCrcTable[(crc ^ static_cast<uint8_t>(b)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::optional<DebugFile> open_elf(const std::string& path) {
  std::string ignored;
  auto file = map_elf_file(path, &ignored);
  if (!file) return std::nullopt;
  auto image = elf::ElfImage::parse(std::as_bytes(file->bytes()), &ignored);
  if (!image) return std::nullopt;
  return DebugFile{std::move(*file), std::move(*image)};
}

std::optional<DebugFile> find_by_build_id(std::span<const std::byte> build_id, const std::string& debug_root) {
  if (build_id.size() < 2) return std::nullopt;
  std::string id = elf::hex_text(build_id);
  auto debug = open_elf(debug_root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
  if (!debug || !std::ranges::equal(debug->image.build_id(), build_id)) return std::nullopt;
  return debug;
}

std::optional<DebugFile> find_by_debug_link(const elf::DebugLink& link, const std::string& path,
                                            const std::string& debug_root) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string name(link.file_name);
  for (const std::string& candidate : {dir + "/" + name, dir + "/.debug/" + name, debug_root + "/" + dir + "/" + name}) {
    auto debug = open_elf(candidate);
    if (debug && crc32(std::as_bytes(debug->file.bytes())) == link.crc) return debug;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DebugFile> find_debug_file(const elf::ElfImage& stripped, const std::string& path,
                                         const std::string& debug_root) {
  if (auto debug = find_by_build_id(stripped.build_id(), debug_root)) return debug;
  if (auto link = stripped.debug_link()) return find_by_debug_link(*link, path, debug_root);
  return std::nullopt;
}

}  // namespace nmprof::symbols
