// gzip compression (the wrapping pprof and its tools expect of a .pb.gz file).
#pragma once

#include <string>
#include <string_view>

namespace nmprof::pprof {

// Throws std::runtime_error when zlib fails (out of memory).
std::string gzip(std::string_view bytes);

}  // namespace nmprof::pprof
