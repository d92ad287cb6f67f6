// JFR string values in their six encodings (jfr-format.md section 4), decoded to UTF-8.
#pragma once

#include <cstdint>
#include <string>

#include "formats/jfr/reading/byte_reader.h"

namespace nmprof::jfr {

enum class StringKind { Null, Text, PoolKey };

// Reads one string. Text: out holds it as UTF-8. PoolKey (encoding 2): key holds the
// key into the chunk's java.lang.String pool and the caller resolves it.
StringKind read_string(ByteReader& in, std::string& out, uint64_t& key);
void skip_string(ByteReader& in);

}  // namespace nmprof::jfr
