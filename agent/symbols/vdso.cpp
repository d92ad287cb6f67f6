#include "agent/symbols/vdso.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "agent/safety/own_descriptors.h"

namespace nmprof::symbols {

namespace {

std::string read_proc_maps() {
  std::string text;
  own_descriptors::HeldFile maps("/proc/self/maps", O_RDONLY);
  if (maps.fd() < 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(maps.fd(), buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

}  // namespace

std::span<const std::byte> vdso_image() {
  uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return {};
  // The ELF's PT_LOAD segment does not cover its section headers; the mapping does.
  std::string maps = read_proc_maps();
  for (size_t line = 0; line < maps.size();) {
    size_t end_of_line = maps.find('\n', line);
    if (end_of_line == std::string::npos) end_of_line = maps.size();
    uintptr_t start, end;
    if (std::sscanf(maps.c_str() + line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) == 2 && start == base &&
        end > start) {
      return {reinterpret_cast<const std::byte*>(start), end - start};
    }
    line = end_of_line + 1;
  }
  return {};
}

}  // namespace nmprof::symbols
