// Fuzzes the demanglers (Itanium C++, Rust legacy and v0) with the symbol names a
// library can carry: any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/mangling/demangle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nmprof::symbols::demangle(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
