// Fuzzes the generic JFR reader: every chunk, every event decoded in full, and every
// constant-pool entry the events reach resolved (once each), as `jfr print` would.
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <utility>

#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/recording.h"

namespace {

using nmprof::jfr::Chunk;
using nmprof::jfr::Value;

// Pool entries refer to each other, in cycles too: each is followed once per chunk.
using Resolved = std::set<std::pair<const nmprof::jfr::Type*, uint64_t>>;

void visit_value(const Chunk& chunk, const Value& value, Resolved& resolved) {
  switch (value.kind()) {
    case Value::Kind::Reference:
      if (resolved.emplace(value.type(), value.key()).second) visit_value(chunk, chunk.resolve(value), resolved);
      break;
    case Value::Kind::Struct:
    case Value::Kind::Array:
      for (const Value& element : value.elements()) visit_value(chunk, element, resolved);
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nmprof::jfr::Recording recording(std::span<const uint8_t>(data, size));
    recording.for_each_chunk([](const Chunk& chunk) {
      Resolved resolved;
      chunk.for_each_event([&](const nmprof::jfr::Event& event) { visit_value(chunk, event.value(), resolved); });
    });
  } catch (const nmprof::jfr::FormatError&) {
    // Not a JFR file at all: the one documented refusal.
  }
  return 0;
}
