// Test helpers that write recordings the way nmprof's agent does (ChunkWriter,
// nmprof's schema, pool keys carrying the pid in their high 32 bits), plus temporary
// files to put them in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/jfr/writing/byte_buffer.h"
#include "formats/jfr/writing/chunk_writer.h"
#include "formats/jfr/writing/constant_pools.h"
#include "formats/jfr/metadata.h"
#include "formats/jfr/nmprof_schema.h"

namespace nmprof::testing {

// Ticks are nanoseconds since kTestClock.start_ticks; tick t is start_nanos + t - start_ticks.
constexpr jfr::ChunkClock kTestClock{1'700'000'000'000'000'000ull, 1'000'000, 1'000'000'000};

struct NativeFrame {
  std::string function;
  std::string library;
  jfr::schema::FrameTypeKey type = jfr::schema::kNative;
  uint32_t return_address = 0;  // link-time, in the library: the frame's bytecode index
};

// What nmprof.Module says of a module's build (the fields the chunk's metadata has).
struct ModuleBuild {
  std::string build_id;
  uint64_t file_size = 0;
  int64_t file_modified_ns = 0;
};

// Appends a record (size, type, fields) with the size in its shortest form.
void put_record(jfr::ByteBuffer& out, uint64_t type, const jfr::ByteBuffer& fields);

class NmprofChunk {
 public:
  // Starts a chunk at the end of fd. `metadata` may extend nmprof's (e.g. more
  // nmprof.Statistics fields) but must keep its type ids and field order otherwise.
  NmprofChunk(int fd, int64_t pid, const jfr::Metadata& metadata = jfr::schema::nmprof_metadata(),
              const jfr::ChunkClock& clock = kTestClock);

  uint64_t thread(const std::string& name, int64_t tid);
  uint64_t stack(const std::vector<NativeFrame>& frames, bool truncated = false);

  // A realloc's sample: the block had `before` bytes, and live_weight in the live view
  // (0: weight). Written only when the metadata has the fields (older recordings did not).
  void malloc(int64_t ticks, uint64_t thread, uint64_t stack, uint64_t address, uint64_t size, float weight,
              uint64_t before = 0, float live_weight = 0);
  // A realloc's move of the block to new_address with new_size and new_weight (0: a free).
  void free(int64_t ticks, uint64_t thread, uint64_t address, uint64_t new_address = 0, uint64_t new_size = 0,
            float new_weight = 0);
  void process(int64_t parent_pid, const std::string& command);
  void setting(const std::string& name, const std::string& value);
  void module(const std::string& name, const std::string& path, const ModuleBuild& build = {});
  // nmprof.Statistics with these counters by field name; fields not named are 0.
  void statistics(int64_t ticks, const std::map<std::string, int64_t>& values);

  // Writes the pool entries and events added since the last append.
  void append(int64_t now_ticks);
  uint64_t bytes_written() const { return writer_.bytes_written(); }

 private:
  uint64_t symbol(const std::string& text);
  uint64_t method(const NativeFrame& frame);
  uint64_t next_key() { return (static_cast<uint64_t>(pid_) << 32) | ++last_key_; }

  int64_t pid_;
  bool realloc_fields_;  // the metadata has nmprof 0.2's realloc fields
  uint64_t last_key_ = 0;
  jfr::ChunkWriter writer_;
  jfr::ConstantPools pools_;
  jfr::ByteBuffer events_;
  std::map<std::string, uint64_t> symbols_, classes_, methods_;
  bool frame_types_written_ = false;
  std::vector<std::string> statistics_fields_;  // after startTime, in wire order
  std::vector<std::string> module_fields_;
};

// A path in a fresh temporary directory (removed at exit).
std::string temp_path(const std::string& name);
std::vector<uint8_t> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace nmprof::testing
