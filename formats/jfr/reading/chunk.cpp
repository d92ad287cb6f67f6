#include "formats/jfr/reading/chunk.h"

#include <algorithm>
#include <iterator>

#include "formats/jfr/reading/metadata_reader.h"

namespace nmprof::jfr {
namespace {

// Where the next chunk starts at or after `from`: its magic followed by major version 2.
size_t find_next_chunk(std::span<const uint8_t> bytes, size_t from) {
  static const uint8_t start[] = {'F', 'L', 'R', 0, 0, 2};
  if (from >= bytes.size()) return bytes.size();
  auto it =
      std::search(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(), std::begin(start), std::end(start));
  return static_cast<size_t>(it - bytes.begin());
}

uint64_t record_size(std::span<const uint8_t> bytes, size_t record) { return ByteReader(bytes, record).varint(); }

}  // namespace

Chunk::Chunk(std::span<const uint8_t> file, size_t offset, size_t index, std::vector<std::string>& warnings,
             const PositionObserver& observer)
    : offset_(offset),
      index_(index),
      warnings_(warnings),
      observer_(observer),
      header_(parse_chunk_header(file.subspan(offset))),
      layout_(scan_records(file)),
      types_(read_types()),
      decoder_(layout_.bytes, types_, pools_) {
  for (const auto& t : types_.types())
    if (t.is_event()) event_types_.emplace(t.id, &t);
  if (types_.types().empty()) return;
  for (size_t checkpoint : layout_.checkpoints) {
    try {
      index_checkpoint(checkpoint);
    } catch (const FormatError& e) {
      warn("damaged checkpoint at offset " + std::to_string(offset_ + checkpoint) + " (" + e.what() +
           "); entries after the damage are missing");
    }
  }
}

Chunk::Layout Chunk::scan_records(std::span<const uint8_t> file) const {
  std::span<const uint8_t> chunk = file.subspan(offset_);
  const size_t available = chunk.size();
  const uint64_t declared = header_.size;
  if (header_.file_state != 0) warn("was still being written (file state " + std::to_string(header_.file_state) + ")");
  if (declared > available)
    warn("truncated: its header declares " + std::to_string(declared) + " bytes, the file holds " +
         std::to_string(available));

  // A record may not cross into the next chunk when the header's size is where one starts.
  const bool declared_end_is_boundary =
      declared >= kChunkHeaderSize && declared <= available &&
      (declared == available || has_chunk_magic(chunk.subspan(static_cast<size_t>(declared))));

  Layout layout;
  std::string damage;
  size_t pos = kChunkHeaderSize, last_told = 0;
  while (pos < available) {
    passed(pos, last_told);
    if (pos >= declared && has_chunk_magic(chunk.subspan(pos))) break;
    auto at = [&] { return " at offset " + std::to_string(offset_ + pos); };
    uint64_t size = 0, type = 0;
    try {
      ByteReader in(chunk, pos);
      size = in.varint();
      type = in.varint();
    } catch (const FormatError&) {
      damage = "truncated: the record" + at() + " is cut short";
      break;
    }
    if (size == 0) {
      damage = "damaged record" + at() + " (size 0)";
      break;
    }
    if (size > available - pos) {
      damage = "truncated: the record" + at() + " needs " + std::to_string(size) + " bytes, the file holds " +
               std::to_string(available - pos);
      break;
    }
    if (declared_end_is_boundary && pos < declared && pos + size > declared) {
      damage = "damaged record" + at() + " (its size crosses the end of the chunk)";
      break;
    }
    if (type == 0) layout.metadata_records.push_back(pos);
    if (type == 1) layout.checkpoints.push_back(pos);
    pos += static_cast<size_t>(size);
  }
  layout.bytes = chunk.first(pos);
  if (declared >= kChunkHeaderSize && pos > declared)
    warn("holds records past the size in its header (its writer stopped before updating the header)");

  size_t next = pos;
  if (!damage.empty()) {
    next = find_next_chunk(chunk, pos + 1);
    if (next < available) damage += "; skipping to the next chunk at offset " + std::to_string(offset_ + next);
    warn(damage + "; kept the records before it");
  }
  layout.next_chunk = offset_ + next;
  return layout;
}

TypeSystem Chunk::read_types() const {
  const auto& records = layout_.metadata_records;
  // The last metadata record declares every type of the chunk; an earlier one is a
  // fallback if the last is damaged.
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    try {
      return TypeSystem(read_metadata(layout_.bytes.subspan(*it, record_size(layout_.bytes, *it))));
    } catch (const FormatError& e) {
      warn("damaged metadata record at offset " + std::to_string(offset_ + *it) + " (" + e.what() + ")");
    }
  }
  warn("has no readable metadata record; its events are skipped");
  return {};
}

void Chunk::index_checkpoint(size_t record_start) {
  size_t record_end = record_start + record_size(layout_.bytes, record_start);
  // Bounded by the record, positioned in chunk offsets, so entry positions index the chunk.
  ByteReader in(layout_.bytes.first(record_end), record_start);
  in.varint();  // size
  in.varint();  // type 1
  in.varint();  // start time
  in.varint();  // duration
  in.varint();  // delta to the previous checkpoint; every checkpoint is found by scanning instead
  in.u8();      // checkpoint type
  for (uint64_t pools = in.varint(); pools > 0; pools--) {
    uint64_t type_id = in.varint();
    const Type* type = types_.find(type_id);
    if (!type) throw FormatError("pool of undeclared type " + std::to_string(type_id));
    uint64_t count = in.varint();
    if (count > in.remaining()) throw FormatError("pool entry count exceeds the record");
    for (; count > 0; count--) {
      uint64_t key = in.varint();
      pools_.add(type_id, key, in.position());
      decoder_.skip_value(*type, in);
    }
  }
}

Value Chunk::resolve(const Value& reference) const {
  if (reference.kind() != Value::Kind::Reference || !reference.type()) return {};
  return decoder_.entry(*reference.type(), reference.key());
}

void Chunk::warn(const std::string& message) const {
  warnings_.push_back("chunk " + std::to_string(index_ + 1) + " (offset " + std::to_string(offset_) + "): " + message);
}

void Chunk::warn_damaged_events(size_t count, size_t first_offset, const std::string& first_error) const {
  warn("skipped " + std::to_string(count) + " damaged event record" + (count == 1 ? "" : "s") + " (first at offset " +
       std::to_string(first_offset) + ": " + first_error + ")");
}

}  // namespace nmprof::jfr
