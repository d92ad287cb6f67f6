#include "agent/symbols/image_identity.h"

namespace nmprof::symbols {

ImageIdentity ImageIdentity::of_file(const struct stat& file, std::string build_id) {
  return {std::move(build_id), static_cast<uint64_t>(file.st_size),
          int64_t{file.st_mtim.tv_sec} * 1'000'000'000 + file.st_mtim.tv_nsec, static_cast<uint64_t>(file.st_dev),
          static_cast<uint64_t>(file.st_ino)};
}

std::optional<std::string> ImageIdentity::difference(const elf::ElfImage& image, const struct stat& file) const {
  if (!build_id.empty()) {
    std::string found = elf::hex_text(image.build_id());
    if (found == build_id) return std::nullopt;
    return "build id " + build_id + " when loaded, " + (found.empty() ? "none" : found) + " now";
  }
  if (size == 0) return "the loaded image has no build id and its file was not found when loaded";
  ImageIdentity now = of_file(file, "");
  if (now.size == size && now.modified_ns == modified_ns && now.device == device && now.inode == inode)
    return std::nullopt;
  return "no build id, and the file's size, modification time or inode changed since it was loaded";
}

}  // namespace nmprof::symbols
