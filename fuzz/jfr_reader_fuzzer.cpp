// Fuzzes the generic JFR reader: every chunk, every event decoded in full, and the
// constant-pool references inside resolved a few levels deep, as `jfr print` would.
#include <cstddef>
#include <cstdint>
#include <span>

#include "formats/jfr/byte_reader.h"
#include "formats/jfr/recording.h"

namespace {

using nmprof::jfr::Chunk;
using nmprof::jfr::Value;

// Pools may refer to each other in cycles; a few levels reach every kind of entry.
constexpr int kMaxResolveDepth = 4;

void visit_value(const Chunk& chunk, const Value& value, int depth) {
  if (depth > kMaxResolveDepth) return;
  switch (value.kind()) {
    case Value::Kind::Reference:
      visit_value(chunk, chunk.resolve(value), depth + 1);
      break;
    case Value::Kind::Struct:
    case Value::Kind::Array:
      for (const Value& element : value.elements()) visit_value(chunk, element, depth);
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
      chunk.for_each_event([&chunk](const nmprof::jfr::Event& event) { visit_value(chunk, event.value(), 0); });
    });
  } catch (const nmprof::jfr::FormatError&) {
    // Not a JFR file at all: the one documented refusal.
  }
  return 0;
}
