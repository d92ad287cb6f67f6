// One chunk of a recording, read by scanning its records in order: the last metadata
// record gives the types, every checkpoint met on the way feeds the pool index, and
// events are decoded on request. Scanning rather than trusting the header's offsets
// also reads a chunk whose writer died mid-append (jfr-format.md section 12).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/chunk_header.h"
#include "formats/jfr/writing/chunk_writer.h"
#include "formats/jfr/reading/event.h"
#include "formats/jfr/reading/pool_index.h"
#include "formats/jfr/reading/type_system.h"
#include "formats/jfr/reading/value.h"
#include "formats/jfr/reading/value_decoder.h"

namespace nmprof::jfr {

// Told the file offset reading has passed, every few megabytes of a pass over the
// records: lets the reader of a huge file free the pages behind it.
using PositionObserver = std::function<void(size_t file_offset)>;
constexpr size_t kPositionStep = 8 << 20;

class Chunk {
 public:
  // Reads the chunk starting at `offset` of `file`. Throws FormatError only when its
  // header is unusable; other damage is appended to `warnings` and the readable part kept.
  Chunk(std::span<const uint8_t> file, size_t offset, size_t index, std::vector<std::string>& warnings,
        const PositionObserver& observer = {});
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  const ChunkHeader& header() const { return header_; }
  const TypeSystem& types() const { return types_; }
  size_t index() const { return index_; }
  // Where the next chunk starts in the file (the file size when there is none).
  size_t next_chunk_offset() const { return layout_.next_chunk; }

  // The pool entry a reference value points to; null when absent or not a reference.
  Value resolve(const Value& reference) const;

  // Calls visit(const Event&) for every event record in file order. A FormatError
  // thrown while visiting one record skips that record (counted in a warning).
  template <class Visit>
  void for_each_event(Visit&& visit) const;

 private:
  // Where the records of the chunk are, found by walking their sizes.
  struct Layout {
    std::span<const uint8_t> bytes;  // from the header to the end of the last complete record
    size_t next_chunk = 0;           // file offset
    std::vector<size_t> metadata_records;
    std::vector<size_t> checkpoints;
  };

  Layout scan_records(std::span<const uint8_t> file) const;
  TypeSystem read_types() const;
  void index_checkpoint(size_t record_start);
  void warn(const std::string& message) const;
  // Tells the observer when `pos` (a chunk offset) is a step past `last`.
  void passed(size_t pos, size_t& last) const {
    if (pos - last < kPositionStep || !observer_) return;
    last = pos;
    observer_(offset_ + pos);
  }
  void warn_damaged_events(size_t count, size_t first_offset, const std::string& first_error) const;

  size_t offset_;
  size_t index_;
  std::vector<std::string>& warnings_;
  PositionObserver observer_;
  ChunkHeader header_;
  Layout layout_;
  TypeSystem types_;
  std::unordered_map<uint64_t, const Type*> event_types_;
  PoolIndex pools_;
  ValueDecoder decoder_;
};

template <class Visit>
void Chunk::for_each_event(Visit&& visit) const {
  size_t damaged = 0, first_damaged = 0, last_told = 0;
  std::string first_error;
  for (size_t pos = kChunkHeaderSize; pos < layout_.bytes.size();) {
    passed(pos, last_told);
    // Record sizes were validated by scan_records, but a file that changes while it is
    // read (a looping session's, whose read records are punched out) may now say
    // otherwise: what follows is then left out, never walked in place.
    uint64_t size = 0, type_id = 0;
    size_t head = 0;
    try {
      ByteReader in(layout_.bytes, pos);
      size = in.varint();
      type_id = in.varint();
      head = in.position() - pos;
    } catch (const FormatError&) {
    }
    if (size <= head || size > layout_.bytes.size() - pos) {
      warn("changed while it was read: its records from offset " + std::to_string(offset_ + pos) + " on are left out");
      break;
    }
    auto type = event_types_.find(type_id);
    if (type != event_types_.end()) {
      try {
        visit(Event(decoder_, *type->second, layout_.bytes.subspan(pos, size), head, offset_ + pos));
      } catch (const FormatError& e) {
        if (damaged++ == 0) {
          first_damaged = offset_ + pos;
          first_error = e.what();
        }
      }
    }
    pos += static_cast<size_t>(size);
  }
  if (damaged) warn_damaged_events(damaged, first_damaged, first_error);
}

}  // namespace nmprof::jfr
