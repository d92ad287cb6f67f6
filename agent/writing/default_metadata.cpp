#include "agent/writing/default_metadata.h"

namespace nmprof {
namespace {

// Written by default_metadata_encoder at build time: kBody[] and kId.
#include "default_metadata.inc"

}  // namespace

std::span<const uint8_t> default_metadata_body() { return kBody; }
uint64_t default_metadata_id() { return kId; }

}  // namespace nmprof
