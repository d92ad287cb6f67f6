// The JFR metadata of a recording without context attributes (most of them),
// encoded when nmprof is built: a process then starts without building and encoding
// the schema (about 1M instructions and 50 pages of memory touched, in every process
// the agent is preloaded into).
#pragma once

#include <cstdint>
#include <span>

namespace nmprof {

// jfr::schema::nmprof_metadata()'s encode_body() and fingerprint().
std::span<const uint8_t> default_metadata_body();
uint64_t default_metadata_id();

}  // namespace nmprof
