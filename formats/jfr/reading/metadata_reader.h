// Parses a metadata record (jfr-format.md section 6) back into the declarations the
// writer encodes them from, so a reader learns each chunk's own type system.
#pragma once

#include <cstdint>
#include <span>

#include "formats/jfr/metadata.h"

namespace nmprof::jfr {

// `record` spans one whole metadata record, starting at its size field. Throws
// FormatError when it is malformed.
Metadata read_metadata(std::span<const uint8_t> record);

}  // namespace nmprof::jfr
