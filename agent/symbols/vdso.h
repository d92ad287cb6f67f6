// The vDSO (linux-vdso.so.1), which has no file: the kernel maps a complete ELF
// image, section headers included, into every process.
#pragma once

#include <cstddef>
#include <span>

namespace nmprof::symbols {

// The mapped image (getauxval(AT_SYSINFO_EHDR) to the end of its mapping in
// /proc/self/maps), or empty if the process has no vDSO or the maps are unreadable.
std::span<const std::byte> vdso_image();

}  // namespace nmprof::symbols
