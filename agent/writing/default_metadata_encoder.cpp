// Build step: writes default_metadata.inc, the metadata of a recording without
// context attributes as C++ constants (see default_metadata.h).
//   default_metadata_encoder <output file>
#include <cstdio>

#include "formats/jfr/nmprof_schema.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output file>\n", argv[0]);
    return 2;
  }
  const nmprof::jfr::Metadata& metadata = nmprof::jfr::schema::nmprof_metadata();
  nmprof::jfr::ByteBuffer body = metadata.encode_body();
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  std::fprintf(out, "constexpr uint64_t kId = %lluull;\nconstexpr uint8_t kBody[] = {",
               static_cast<unsigned long long>(metadata.fingerprint()));
  for (size_t i = 0; i < body.size(); i++) std::fprintf(out, "%s%u", i == 0 ? "\n" : i % 24 ? "," : ",\n", body.data()[i]);
  std::fprintf(out, "};\n");
  return std::fclose(out) == 0 ? 0 : 1;
}
