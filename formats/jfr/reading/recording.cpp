#include "formats/jfr/reading/recording.h"

#include <optional>
#include <utility>

namespace nmprof::jfr {

Recording::Recording(std::span<const uint8_t> file, PositionObserver observer)
    : file_(file), observer_(std::move(observer)) {
  if (file.empty()) throw FormatError("empty file");
  parse_chunk_header(file);
}

void Recording::for_each_chunk(const std::function<void(const Chunk&)>& visit) {
  size_t offset = 0;
  for (size_t index = 0; offset < file_.size(); index++) {
    std::optional<Chunk> chunk;
    try {
      chunk.emplace(file_, offset, index, warnings_, observer_);
    } catch (const FormatError& e) {
      // Only reached at a later chunk (the first header was checked on construction).
      warnings_.push_back("chunk " + std::to_string(index + 1) + " (offset " + std::to_string(offset) +
                          "): " + e.what() + "; stopped reading there");
      return;
    }
    visit(*chunk);
    offset = chunk->next_chunk_offset();
  }
}

}  // namespace nmprof::jfr
