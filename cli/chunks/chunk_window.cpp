#include "cli/chunks/chunk_window.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/reading/chunk_header.h"
#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/varint.h"
#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof::cli {
namespace {

constexpr uint64_t kMetadataRecord = 0;
constexpr uint64_t kCheckpointRecord = 1;

constexpr size_t kMostFields = 7;  // read at once: a realloc move's head
using Fields = std::array<uint64_t, kMostFields>;

// Reads `count` varints (at most kMostFields) from `at`, in order; throws at the end
// of the bytes. Without a heap allocation: this runs for every record a chunk takes.
Fields varints(const uint8_t* at, const uint8_t* end, size_t count, size_t* length = nullptr) {
  Fields values{};
  const uint8_t* start = at;
  for (size_t i = 0; i < count; i++) {
    size_t n = jfr::decode_varint(at, end, values[i]);
    if (n == 0) throw jfr::FormatError("a record ends inside its fields");
    at += n;
  }
  if (length) *length = static_cast<size_t>(at - start);
  return values;
}

void put_be64(uint8_t* at, uint64_t value) {
  for (int i = 7; i >= 0; i--, value >>= 8) at[i] = static_cast<uint8_t>(value);
}

// The checkpoint `record` with its delta (the offset of the previous checkpoint from
// it, negative) replaced: checkpoints are chained backwards from the header.
std::vector<uint8_t> with_delta(const std::vector<uint8_t>& record, int64_t delta) {
  const uint8_t* end = record.data() + record.size();
  size_t size_length = 0;
  varints(record.data(), end, 1, &size_length);
  size_t head_length = 0;  // type, start, duration, delta
  varints(record.data() + size_length, end, 4, &head_length);
  Fields head = varints(record.data() + size_length, end, 3);
  uint8_t fields[4 * 10];
  size_t n = 0;
  for (size_t i = 0; i < 3; i++) n += jfr::encode_varint(head[i], fields + n);
  n += jfr::encode_varint(static_cast<uint64_t>(delta), fields + n);
  const uint8_t* rest = record.data() + size_length + head_length;
  size_t rest_length = static_cast<size_t>(end - rest);
  std::vector<uint8_t> out(size_length + n + rest_length);
  jfr::encode_varint_padded(out.size(), out.data(), size_length);
  std::copy(fields, fields + n, out.data() + size_length);
  std::copy(rest, end, out.data() + size_length + n);
  return out;
}

// A record of `body` (its type and fields): its size, which counts itself, in front.
std::vector<uint8_t> sized(const std::vector<uint8_t>& body) {
  size_t length = 1;
  while (length < 9 && body.size() + length >= (uint64_t{1} << (7 * length))) length++;
  std::vector<uint8_t> record(length + body.size());
  jfr::encode_varint_padded(record.size(), record.data(), length);
  std::copy(body.begin(), body.end(), record.begin() + static_cast<ptrdiff_t>(length));
  return record;
}

// The profiler.LiveMalloc of a sampled block: its profiler.Malloc (or LiveMalloc)
// `allocation` retyped, with the address, size, live weight and time that its last
// realloc move (a profiler.Free record), when given, left it with.
//   Malloc: size type | startTime thread stack address size | weight(4) | allocator previousSize | liveWeight(4) | ...
//   Free:   size type | startTime thread stack address newAddress newSize | newWeight(4)
std::vector<uint8_t> live_malloc(const std::vector<uint8_t>& allocation, const std::vector<uint8_t>* move) {
  const uint8_t* end = allocation.data() + allocation.size();
  size_t size_length = 0, head_length = 0, middle_length = 0;
  varints(allocation.data(), end, 1, &size_length);
  const uint8_t* head = allocation.data() + size_length;
  Fields fields = varints(head, end, 6, &head_length);  // type ... size
  fields[0] = jfr::schema::kLiveMallocEvent;
  const uint8_t* weight = head + head_length;
  if (end - weight < 4) throw jfr::FormatError("a record ends inside its fields");
  varints(weight + 4, end, 2, &middle_length);  // allocator, previousSize
  const uint8_t* live_weight = weight + 4 + middle_length;
  if (end - live_weight < 4) throw jfr::FormatError("a record ends inside its fields");
  uint8_t moved_weight[4];
  if (move) {
    const uint8_t* move_end = move->data() + move->size();
    size_t move_size_length = 0, move_head_length = 0;
    varints(move->data(), move_end, 1, &move_size_length);
    Fields moved = varints(move->data() + move_size_length, move_end, 7, &move_head_length);
    const uint8_t* new_weight = move->data() + move_size_length + move_head_length;
    if (move_end - new_weight < 4) throw jfr::FormatError("a record ends inside its fields");
    std::copy(new_weight, new_weight + 4, moved_weight);
    fields[1] = moved[1];  // its time
    fields[4] = moved[5];  // newAddress
    fields[5] = moved[6];  // newSize
    live_weight = moved_weight;
  }
  std::vector<uint8_t> body(6 * 10 + 8 + 2 * 10);
  size_t n = 0;
  for (size_t i = 0; i < 6; i++) n += jfr::encode_varint(fields[i], body.data() + n);
  body.resize(n);
  body.insert(body.end(), weight, weight + 4 + middle_length);
  body.insert(body.end(), live_weight, live_weight + 4);
  body.insert(body.end(), weight + 4 + middle_length + 4, end);
  return sized(body);
}

// A sample's, move's or free's time: its first field.
int64_t record_ticks(const std::vector<uint8_t>& record) {
  return static_cast<int64_t>(varints(record.data(), record.data() + record.size(), 3)[2]);  // size, type, startTime
}

// What statistics re-encoded with a stop reason may add to their size.
constexpr size_t kStoppedGrowingSlack = 16;

// The nmprof.Statistics `record` with stoppedGrowing (its 12th field) set to `reason`;
// as it is when it holds fewer fields.
std::vector<uint8_t> with_stop(const std::vector<uint8_t>& record, uint64_t reason) {
  constexpr size_t kFields = 13;  // type, startTime ... stoppedGrowing
  const uint8_t* end = record.data() + record.size();
  size_t size_length = 0;
  varints(record.data(), end, 1, &size_length);
  std::array<uint64_t, kFields> fields{};
  const uint8_t* at = record.data() + size_length;
  for (size_t i = 0; i < kFields; i++) {
    size_t n = jfr::decode_varint(at, end, fields[i]);
    if (n == 0) return record;
    at += n;
  }
  fields[kFields - 1] = reason;
  std::vector<uint8_t> body(kFields * 10);
  size_t n = 0;
  for (uint64_t value : fields) n += jfr::encode_varint(value, body.data() + n);
  body.resize(n);
  body.insert(body.end(), at, end);  // fields a later agent may add
  return sized(body);
}

// The chunk setting (schema::kChunkSetting) of a window that ends at `ticks`.
std::vector<uint8_t> chunk_setting(int64_t ticks, bool runs_on) {
  std::vector<uint8_t> body(4 * 10);
  size_t n = 0;
  for (uint64_t value : {uint64_t{jfr::schema::kSettingEvent}, static_cast<uint64_t>(ticks), uint64_t{0},
                         uint64_t{jfr::schema::kMallocEvent}})  // type, startTime, duration, id
    n += jfr::encode_varint(value, body.data() + n);
  body.resize(n);
  const char* value = runs_on ? jfr::schema::kChunkRunsOn : jfr::schema::kChunkEnded;
  for (std::string_view text : {jfr::schema::kChunkSetting, value}) {
    body.push_back(3);  // a UTF-8 string with its length
    uint8_t length[10];
    body.insert(body.end(), length, length + jfr::encode_varint(text.size(), length));
    body.insert(body.end(), text.begin(), text.end());
  }
  return sized(body);
}

}  // namespace

void ChunkWindow::take(std::span<const uint8_t> header, std::span<const uint8_t> records) {
  jfr::parse_chunk_header(header);  // throws for what is not one
  header_.assign(header.begin(), header.begin() + jfr::kChunkHeaderSize);
  const uint8_t* end = records.data() + records.size();
  for (size_t offset = 0; offset < records.size();) {
    const uint8_t* at = records.data() + offset;
    size_t head_length = 0;
    Fields head = varints(at, end, 2, &head_length);  // size, type
    uint64_t size = head[0], type = head[1];
    if (size < head_length || size > records.size() - offset) throw jfr::FormatError("a record runs past its chunk");
    offset += size;
    Record record(at, at + size);
    size_t source_offset = taken_;
    taken_ += size;
    grew_ = true;
    bool droppable = type == jfr::schema::kStatisticsEvent || type == jfr::schema::kMallocEvent ||
                     type == jfr::schema::kFreeEvent;
    if (droppable && !droppable_.empty() && droppable_.back().end == source_offset)
      droppable_.back().end = taken_;
    else if (droppable)
      droppable_.push_back({source_offset, taken_});
    if (type == kMetadataRecord) {
      metadata_ = std::move(record);
    } else if (type == kCheckpointRecord) {
      checkpoints_.push_back(std::move(record));
    } else if (type == jfr::schema::kStatisticsEvent) {
      statistics_ = std::move(record);
    } else if (type == jfr::schema::kMallocEvent || type == jfr::schema::kFreeEvent) {
      bool malloc = type == jfr::schema::kMallocEvent;
      // startTime, eventThread, stackTrace, address; a Free's newAddress.
      Fields fields = varints(at + head_length, at + size, malloc ? 4 : 5);
      arrived_.push_back({static_cast<int64_t>(fields[0]), fields[3], malloc ? 0 : fields[4], malloc, false,
                          source_offset, std::move(record)});
    } else {
      descriptions_.push_back(std::move(record));
    }
  }
}

void ChunkWindow::end(Block block, Record free) {
  if (!block.carried) ended_.push_back(std::move(block.allocation));
  for (Record& record : block.moves) ended_.push_back(std::move(record));
  if (!free.empty()) ended_.push_back(std::move(free));
}

void ChunkWindow::follow(Sampled event) {
  if (event.malloc) {
    // A block already there at that address: its free was lost (the agent stopped
    // tracking it); the new block takes its place, as in the report.
    auto old = live_.find(event.address);
    if (old != live_.end()) {
      end(std::move(old->second), {});
      live_.erase(old);
    }
    live_[event.address].allocation = std::move(event.record);
    return;
  }
  auto found = live_.find(event.address);
  if (found == live_.end()) {
    // Its sample comes in a later append; once only.
    if (!event.retried) unpaired_.push_back(std::move(event)), unpaired_.back().retried = true;
    return;
  }
  Block block = std::move(found->second);
  live_.erase(found);
  if (event.new_address == 0) return end(std::move(block), std::move(event.record));
  block.moves.push_back(std::move(event.record));
  auto taken = live_.find(event.new_address);
  if (taken != live_.end()) {
    end(std::move(taken->second), {});
    live_.erase(taken);
  }
  live_.emplace(event.new_address, std::move(block));
}

void ChunkWindow::cut(int64_t start_nanos, int64_t end_nanos, int64_t until_nanos, bool runs_on, size_t room,
                      std::vector<uint8_t>& out) {
  if (header_.empty()) return;
  jfr::ChunkHeader source = jfr::parse_chunk_header(header_);
  // The source's clock: its tick at a wall-clock time.
  auto ticks_at = [&source](int64_t nanos) {
    // A 1 GHz clock (the agent's) needs no scaling, which would round: the reader must
    // find an event's time the same in every window's chunk.
    if (source.ticks_per_second == 1'000'000'000) return source.start_ticks + (nanos - source.start_nanos);
    double ticks = static_cast<double>(source.start_ticks) + static_cast<double>(nanos - source.start_nanos) *
                                                                 static_cast<double>(source.ticks_per_second) / 1e9;
    return ticks >= 9e18 ? INT64_MAX : static_cast<int64_t>(ticks);
  };
  int64_t until_ticks = until_nanos == INT64_MAX ? INT64_MAX : ticks_at(until_nanos);
  std::vector<Sampled> events = std::move(unpaired_);
  unpaired_.clear();
  std::vector<Sampled> later;
  for (Sampled& event : arrived_) (event.ticks < until_ticks ? events : later).push_back(std::move(event));
  arrived_ = std::move(later);
  std::stable_sort(events.begin(), events.end(), [](const Sampled& a, const Sampled& b) { return a.ticks < b.ticks; });
  for (Sampled& event : events) follow(std::move(event));

  size_t chunk_start = out.size();
  out.resize(chunk_start + jfr::kChunkHeaderSize);
  auto append = [&out](const Record& record) { out.insert(out.end(), record.begin(), record.end()); };
  append(metadata_);
  uint64_t last_checkpoint = 0;  // offset in the chunk
  for (const Record& checkpoint : checkpoints_) {
    uint64_t at = out.size() - chunk_start;
    append(with_delta(checkpoint, last_checkpoint ? static_cast<int64_t>(last_checkpoint - at) : 0));
    last_checkpoint = at;
  }
  for (const Record& record : descriptions_) append(record);
  append(chunk_setting(ticks_at(end_nanos), runs_on));
  // Each live block as a later window restates it (and this one, for a block of an
  // earlier window), in live_'s order.
  std::vector<Record> restated;
  size_t fixed = out.size() - chunk_start + statistics_.size() + kStoppedGrowingSlack;
  for (const auto& [address, block] : live_) {
    restated.push_back(live_malloc(block.allocation, block.moves.empty() ? nullptr : &block.moves.back()));
    if (block.carried) fixed += restated.back().size();
  }
  int64_t left_out = room == SIZE_MAX ? INT64_MAX : first_left_out(room > fixed ? room - fixed : 0);
  auto append_in_time = [&](const Record& record) {
    if (left_out == INT64_MAX || record_ticks(record) < left_out) append(record);
  };
  if (!statistics_.empty())
    append(left_out == INT64_MAX ? statistics_ : with_stop(statistics_, jfr::schema::kMaxSizeReached));
  for (const Record& record : ended_) append_in_time(record);
  size_t i = 0;
  for (auto& [address, block] : live_) {
    if (!block.carried) append_in_time(block.allocation);
    for (const Record& move : block.moves) append_in_time(move);
    if (block.carried) append(restated[i]);
    block = {std::move(restated[i++]), {}, true};
  }
  ended_.clear();
  grew_ = !arrived_.empty();  // what is left goes in the next window

  uint8_t* h = out.data() + chunk_start;
  std::copy(header_.begin(), header_.begin() + 8, h);  // magic and version
  put_be64(h + 8, out.size() - chunk_start);
  put_be64(h + 16, last_checkpoint);
  put_be64(h + 24, jfr::kChunkHeaderSize);
  put_be64(h + 32, static_cast<uint64_t>(start_nanos));
  put_be64(h + 40, static_cast<uint64_t>(std::max<int64_t>(end_nanos - start_nanos, 0)));
  put_be64(h + 48, static_cast<uint64_t>(ticks_at(start_nanos)));  // the clock moved to the start
  put_be64(h + 56, static_cast<uint64_t>(source.ticks_per_second));
  std::copy(header_.begin() + 64, header_.end(), h + 64);  // file state and flags
}

int64_t ChunkWindow::started_nanos() const {
  return header_.empty() ? INT64_MIN : jfr::parse_chunk_header(header_).start_nanos;
}

int64_t ChunkWindow::written_until_nanos() const {
  if (header_.empty()) return INT64_MAX;
  jfr::ChunkHeader source = jfr::parse_chunk_header(header_);
  return source.start_nanos + source.duration_nanos;
}

int64_t ChunkWindow::first_left_out(size_t room) const {
  std::vector<std::pair<int64_t, size_t>> records;  // time, size
  size_t all = 0;
  auto add = [&](const Record& record) {
    records.emplace_back(record_ticks(record), record.size());
    all += record.size();
  };
  for (const Record& record : ended_) add(record);
  for (const auto& [address, block] : live_) {
    if (!block.carried) add(block.allocation);
    for (const Record& move : block.moves) add(move);
  }
  if (all <= room) return INT64_MAX;
  std::sort(records.begin(), records.end());
  size_t used = 0;
  for (const auto& [ticks, size] : records)
    if ((used += size) > room) return ticks;
  return INT64_MAX;
}

std::vector<ChunkWindow::ByteRange> ChunkWindow::let_go() {
  // Everything before the first sample or free still waiting for a window.
  size_t bound = taken_;
  for (const std::vector<Sampled>* waiting : {&arrived_, &unpaired_})
    for (const Sampled& event : *waiting) bound = std::min(bound, event.offset);
  std::vector<ByteRange> out;
  auto run = droppable_.begin();
  for (; run != droppable_.end() && run->begin < bound; ++run) {
    out.push_back({run->begin, std::min(run->end, bound)});
    if (run->end > bound) {
      run->begin = bound;
      break;
    }
  }
  droppable_.erase(droppable_.begin(), run);
  return out;
}

}  // namespace nmprof::cli
