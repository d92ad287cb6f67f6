// A JFR file: chunks laid end to end (jfr-format.md sections 1 and 13), each read
// with its own types and pools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <span>
#include <string>
#include <vector>

#include "formats/jfr/reading/chunk.h"

namespace nmprof::jfr {

class Recording {
 public:
  // Throws FormatError when the bytes are not a readable JFR recording at all (not
  // JFR, unsupported version, shorter than a chunk header).
  explicit Recording(std::span<const uint8_t> file, PositionObserver observer = {});

  // Visits every readable chunk in file order. Damage that still lets reading go on
  // (a truncated last chunk, a corrupt record, bytes between chunks) becomes a warning,
  // and so does a chunk that repeats an earlier one byte for byte (it is skipped).
  void for_each_chunk(const std::function<void(const Chunk&)>& visit);
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  // Whether the chunk at `offset` has the bytes of an earlier one. Chunks are compared
  // byte for byte only when their start and size agree.
  bool repeats_earlier_chunk(size_t offset);

  std::span<const uint8_t> file_;
  PositionObserver observer_;
  std::vector<std::string> warnings_;
  std::map<std::tuple<int64_t, int64_t, uint64_t>, size_t> first_offsets_;  // start ns, start ticks, size
};

}  // namespace nmprof::jfr
