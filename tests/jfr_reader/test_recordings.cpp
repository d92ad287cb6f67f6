#include "tests/jfr_reader/test_recordings.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace nmprof::testing {
namespace schema = jfr::schema;

void put_record(jfr::ByteBuffer& out, uint64_t type, const jfr::ByteBuffer& fields) {
  uint8_t scratch[jfr::kMaxVarintLength];
  uint64_t body = jfr::encode_varint(type, scratch) + fields.size();
  uint64_t size = body + 1;
  while (size != body + jfr::encode_varint(size, scratch)) size++;
  out.put_varint(size);
  out.put_varint(type);
  out.put_bytes(fields.data(), fields.size());
}

NmprofChunk::NmprofChunk(int fd, int64_t pid, const jfr::Metadata& metadata, const jfr::ChunkClock& clock) : pid_(pid) {
  if (!writer_.begin(fd, metadata, clock)) throw std::runtime_error("cannot start chunk");
  for (const auto& f : metadata.find(schema::kStatisticsName)->fields)
    if (f.name != "startTime") statistics_fields_.push_back(f.name);
  for (const auto& f : metadata.find(schema::kModuleName)->fields)
    if (f.name != "startTime") module_fields_.push_back(f.name);
  const auto& malloc_fields = metadata.find(schema::kMallocName)->fields;
  realloc_fields_ = std::any_of(malloc_fields.begin(), malloc_fields.end(),
                                [](const jfr::FieldDecl& f) { return f.name == schema::kPreviousSizeField; });
}

uint64_t NmprofChunk::symbol(const std::string& text) {
  auto [it, inserted] = symbols_.try_emplace(text, 0);
  if (inserted) {
    it->second = next_key();
    auto& e = pools_.add_entry(schema::kSymbol);
    e.put_varint(it->second);
    e.put_string(text);
  }
  return it->second;
}

uint64_t NmprofChunk::method(const NativeFrame& frame) {
  auto [klass, new_class] = classes_.try_emplace(frame.library, 0);
  if (new_class) {
    klass->second = next_key();
    uint64_t name = symbol(frame.library);
    auto& e = pools_.add_entry(schema::kClass);
    e.put_varint(klass->second);
    e.put_varint(0);  // class loader
    e.put_varint(name);
    e.put_varint(0);  // package
    e.put_varint(0);  // modifiers
    e.put_bool(false);
  }
  auto [m, new_method] = methods_.try_emplace(frame.function + "\n" + frame.library, 0);
  if (new_method) {
    m->second = next_key();
    uint64_t name = symbol(frame.function), descriptor = symbol("()L;");
    auto& e = pools_.add_entry(schema::kMethod);
    e.put_varint(m->second);
    e.put_varint(klass->second);
    e.put_varint(name);
    e.put_varint(descriptor);
    e.put_varint(schema::kAccNative);
    e.put_bool(false);
  }
  return m->second;
}

uint64_t NmprofChunk::thread(const std::string& name, int64_t tid) {
  uint64_t key = next_key();
  auto& e = pools_.add_entry(schema::kThread);
  e.put_varint(key);
  e.put_string(name);
  e.put_varint(static_cast<uint64_t>(tid));
  e.put_null_string();  // javaName
  e.put_varint(0);      // javaThreadId
  return key;
}

uint64_t NmprofChunk::stack(const std::vector<NativeFrame>& frames, bool truncated) {
  if (!frame_types_written_) {
    frame_types_written_ = true;
    for (auto type : {schema::kNative, schema::kCpp}) {
      auto& e = pools_.add_entry(schema::kFrameType);
      e.put_varint(type);
      e.put_string(schema::frame_type_name(type));
    }
    auto& e = pools_.add_entry(schema::kAllocator);
    e.put_varint(schema::kLibc);
    e.put_string(schema::allocator_name(schema::kLibc));
  }
  std::vector<uint64_t> methods;
  for (const auto& f : frames) methods.push_back(method(f));
  uint64_t key = next_key();
  auto& e = pools_.add_entry(schema::kStackTrace);
  e.put_varint(key);
  e.put_bool(truncated);
  e.put_varint(frames.size());
  for (size_t i = 0; i < frames.size(); i++) {
    e.put_varint(methods[i]);
    e.put_varint(static_cast<uint32_t>(-1));  // line, as the u32 pattern of an int
    e.put_varint(frames[i].return_address);   // bytecode index
    e.put_varint(frames[i].type);
  }
  return key;
}

void NmprofChunk::malloc(int64_t ticks, uint64_t thread, uint64_t stack, uint64_t address, uint64_t size,
                         float weight, uint64_t before, float live_weight) {
  jfr::ByteBuffer f;
  f.put_varint(static_cast<uint64_t>(ticks));
  f.put_varint(thread);
  f.put_varint(stack);
  f.put_varint(address);
  f.put_varint(size);
  f.put_float(weight);
  f.put_varint(schema::kLibc);
  if (realloc_fields_) {
    f.put_varint(before);
    f.put_float(live_weight ? live_weight : weight);
  }
  f.put_varint(0);  // spanId
  f.put_varint(0);  // localRootSpanId
  put_record(events_, schema::kMallocEvent, f);
}

void NmprofChunk::free(int64_t ticks, uint64_t thread, uint64_t address, uint64_t new_address, uint64_t new_size,
                       float new_weight) {
  jfr::ByteBuffer f;
  f.put_varint(static_cast<uint64_t>(ticks));
  f.put_varint(thread);
  f.put_varint(0);  // no stack
  f.put_varint(address);
  if (realloc_fields_) {
    f.put_varint(new_address);
    f.put_varint(new_size);
    f.put_float(new_weight);
  }
  put_record(events_, schema::kFreeEvent, f);
}

void NmprofChunk::process(int64_t parent_pid, const std::string& command) {
  jfr::ByteBuffer f;
  f.put_varint(kTestClock.start_ticks);
  f.put_varint(static_cast<uint64_t>(pid_));
  f.put_varint(static_cast<uint64_t>(parent_pid));
  f.put_string(command);
  f.put_string(command.substr(0, command.find(' ')));
  f.put_string("testhost");
  f.put_varint(kTestClock.start_nanos / 1'000'000);
  f.put_string("0.1.0");
  put_record(events_, schema::kProcessEvent, f);
}

void NmprofChunk::setting(const std::string& name, const std::string& value) {
  jfr::ByteBuffer f;
  f.put_varint(kTestClock.start_ticks);
  f.put_varint(0);  // duration
  f.put_varint(schema::kMallocEvent);
  f.put_string(name);
  f.put_string(value);
  put_record(events_, schema::kSettingEvent, f);
}

void NmprofChunk::module(const std::string& name, const std::string& path, const ModuleBuild& build) {
  jfr::ByteBuffer f;
  f.put_varint(kTestClock.start_ticks);
  for (const auto& field : module_fields_) {
    if (field == "name") f.put_string(name);
    else if (field == "path") f.put_string(path);
    else if (field == "buildId") f.put_string(build.build_id);
    else if (field == "fileSize") f.put_varint(build.file_size);
    else if (field == "fileModified") f.put_varint(static_cast<uint64_t>(build.file_modified_ns));
    else f.put_varint(0);
  }
  put_record(events_, schema::kModuleEvent, f);
}

void NmprofChunk::statistics(int64_t ticks, const std::map<std::string, int64_t>& values) {
  jfr::ByteBuffer f;
  f.put_varint(static_cast<uint64_t>(ticks));
  for (const auto& name : statistics_fields_) {
    auto it = values.find(name);
    f.put_varint(static_cast<uint64_t>(it == values.end() ? 0 : it->second));
  }
  put_record(events_, schema::kStatisticsEvent, f);
}

void NmprofChunk::append(int64_t now_ticks) {
  if (!writer_.append(pools_, events_, static_cast<uint64_t>(now_ticks))) throw std::runtime_error("append failed");
  pools_.clear();
  events_.clear();
}

std::string temp_path(const std::string& name) {
  static const std::filesystem::path dir = [] {
    char pattern[] = "/tmp/nmprof-test-XXXXXX";
    if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    std::filesystem::path p = pattern;
    static struct Cleanup {
      std::filesystem::path p;
      ~Cleanup() { std::filesystem::remove_all(p); }
    } cleanup{p};
    return p;
  }();
  return (dir / name).string();
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace nmprof::testing
