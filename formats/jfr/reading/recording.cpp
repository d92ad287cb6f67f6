#include "formats/jfr/reading/recording.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

namespace nmprof::jfr {

Recording::Recording(std::span<const uint8_t> file, PositionObserver observer)
    : file_(file), observer_(std::move(observer)) {
  if (file.empty()) throw FormatError("empty file");
  parse_chunk_header(file);
}

bool Recording::repeats_earlier_chunk(size_t offset) {
  ChunkHeader header;
  try {
    header = parse_chunk_header(file_.subspan(offset));
  } catch (const FormatError&) {
    return false;  // Chunk says what is wrong with it
  }
  if (header.size < kChunkHeaderSize || header.size > file_.size() - offset) return false;
  auto key = std::make_tuple(header.start_nanos, header.start_ticks, header.size);
  auto [seen, added] = first_offsets_.emplace(key, offset);
  if (added) return false;
  // In steps, telling the observer: a huge file's pages are let go as they are compared.
  for (size_t at = 0; at < header.size; at += kPositionStep) {
    size_t step = std::min<size_t>(kPositionStep, header.size - at);
    if (std::memcmp(file_.data() + seen->second + at, file_.data() + offset + at, step) != 0) return false;
    if (observer_) observer_(offset + at + step);
  }
  return true;
}

void Recording::for_each_chunk(const std::function<void(const Chunk&)>& visit) {
  size_t repeated = 0;
  size_t offset = 0;
  for (size_t index = 0; offset < file_.size(); index++) {
    // A chunk that repeats an earlier one byte for byte (`cat a.jfr a.jfr`) would be
    // counted twice: skipped, with a note.
    if (repeats_earlier_chunk(offset)) {
      repeated++;
      offset += parse_chunk_header(file_.subspan(offset)).size;
      continue;
    }
    std::optional<Chunk> chunk;
    try {
      chunk.emplace(file_, offset, index, warnings_, observer_);
    } catch (const FormatError& e) {
      // Only reached at a later chunk (the first header was checked on construction).
      warnings_.push_back("chunk " + std::to_string(index + 1) + " (offset " + std::to_string(offset) +
                          "): " + e.what() + "; stopped reading there");
      break;
    }
    visit(*chunk);
    offset = chunk->next_chunk_offset();
  }
  if (repeated > 0)
    warnings_.push_back(std::to_string(repeated) + (repeated == 1 ? " chunk repeats" : " chunks repeat") +
                        " an earlier one byte for byte (a file joined with itself?); counted once");
}

}  // namespace nmprof::jfr
