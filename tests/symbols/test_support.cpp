#include "tests/symbols/test_support.h"

#include <link.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nmprof::symbols::testing {

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/nmprof-symbols-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::optional<LoadedModule> module_containing(const void* address) {
  struct Search {
    uintptr_t address;
    std::optional<LoadedModule> found;
  } search{reinterpret_cast<uintptr_t>(address), std::nullopt};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && search->address >= start && search->address < start + segment.p_memsz) {
            std::string name = info->dlpi_name;
            search->found = LoadedModule{name.empty() ? "/proc/self/exe" : name, info->dlpi_addr,
                                         LoadedImage::of(*info), loaded_build_id(*info)};
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.found;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace nmprof::symbols::testing
