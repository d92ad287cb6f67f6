// The generic JFR reader against files made with nmprof's own writer classes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "formats/jfr/reading/metadata_reader.h"
#include "formats/jfr/reading/recording.h"
#include "tests/jfr_reader/test_recordings.h"

namespace nmprof::jfr {
namespace {

using testing::kTestClock;
using testing::NativeFrame;
using testing::NmprofChunk;
namespace s = schema;

FieldDecl field(std::string name, uint64_t type, bool constant_pool = false, bool array = false) {
  return FieldDecl{std::move(name), type, constant_pool, array, {}};
}

int open_new(const std::string& path) { return ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644); }

// Everything a test wants to know about one event, taken while its chunk is alive.
struct SeenEvent {
  size_t chunk;
  std::string type;
  int64_t start_nanos;
  // By name: a Value finds its fields through its chunk's types, which die with the chunk.
  std::map<std::string, Value, std::less<>> fields;
  std::string thread_name;
  std::vector<std::string> frames;  // method names, innermost first

  const Value& field(std::string_view name) const {
    static const Value kNull;
    auto it = fields.find(name);
    return it == fields.end() ? kNull : it->second;
  }
};

struct Seen {
  std::vector<std::string> warnings;
  std::vector<ChunkHeader> headers;
  std::vector<SeenEvent> events;

  size_t count(const std::string& type) const {
    size_t n = 0;
    for (const auto& e : events) n += e.type == type;
    return n;
  }
};

std::string symbol_text(const Chunk& chunk, const Value& v) {
  Value symbol = chunk.resolve(v);
  return symbol.field("string").string();
}

Seen read_all(std::span<const uint8_t> bytes) {
  Seen seen;
  Recording recording(bytes);
  recording.for_each_chunk([&](const Chunk& chunk) {
    seen.headers.push_back(chunk.header());
    chunk.for_each_event([&](const Event& e) {
      SeenEvent se{chunk.index(), e.type().name, 0, {}, {}, {}};
      Value value = e.value();
      for (size_t i = 0; i < e.type().fields.size(); i++) se.fields[e.type().fields[i].name] = value.elements()[i];
      se.start_nanos = chunk.header().ticks_to_nanos(se.field("startTime").integer());
      Value thread = chunk.resolve(se.field("eventThread"));
      se.thread_name = thread.field("osName").string();
      Value stack = chunk.resolve(se.field("stackTrace"));
      for (const auto& frame : stack.field("frames").elements())
        se.frames.push_back(symbol_text(chunk, chunk.resolve(frame.field("method")).field("name")));
      seen.events.push_back(std::move(se));
    });
  });
  seen.warnings = recording.warnings();
  return seen;
}

Seen read_all(const std::string& path) {
  auto bytes = testing::read_file(path);
  return read_all(bytes);
}

// A file may hold any float where an integer is read (found by fuzzing the report).
TEST(Value, AFloatReadAsAnIntegerIsClampedToItsRange) {
  volatile double as_read[] = {1e30, -4.6e29, std::nan(""), -2.9};  // not folded by the compiler
  const int64_t expected[] = {INT64_MAX, INT64_MIN, 0, -2};
  for (size_t i = 0; i < 4; i++) {
    Value v;
    v.set_float(as_read[i]);
    EXPECT_EQ(v.integer(), expected[i]) << as_read[i];
  }
}

TEST(MetadataReader, ReadsBackEveryDeclarationTheWriterEncodes) {
  const Metadata& written = s::nmprof_metadata();
  ByteBuffer record;
  written.encode(record, 1234, 77);
  Metadata read = read_metadata({record.data(), record.size()});

  ASSERT_EQ(read.types().size(), written.types().size());
  for (size_t i = 0; i < written.types().size(); i++) {
    const TypeDecl& w = written.types()[i];
    const TypeDecl& r = read.types()[i];
    EXPECT_EQ(r.name, w.name);
    EXPECT_EQ(r.id, w.id);
    EXPECT_EQ(r.super_type, w.super_type);
    EXPECT_EQ(r.simple_type, w.simple_type);
    ASSERT_EQ(r.annotations.size(), w.annotations.size()) << w.name;
    for (size_t a = 0; a < w.annotations.size(); a++) {
      EXPECT_EQ(r.annotations[a].type, w.annotations[a].type);
      EXPECT_EQ(r.annotations[a].values, w.annotations[a].values);
    }
    ASSERT_EQ(r.fields.size(), w.fields.size()) << w.name;
    for (size_t f = 0; f < w.fields.size(); f++) {
      EXPECT_EQ(r.fields[f].name, w.fields[f].name);
      EXPECT_EQ(r.fields[f].type, w.fields[f].type);
      EXPECT_EQ(r.fields[f].constant_pool, w.fields[f].constant_pool);
      EXPECT_EQ(r.fields[f].array, w.fields[f].array);
      EXPECT_EQ(r.fields[f].annotations.size(), w.fields[f].annotations.size());
    }
  }
}

TEST(MetadataReader, RejectsAFieldOfAnUndeclaredType) {
  Metadata m;
  m.add({"long", 11, "", false, {}, {}});
  m.add({"x.Event", 100, "jdk.jfr.Event", false, {}, {field("startTime", 11), field("thing", 99)}});
  ByteBuffer record;
  m.encode(record, 0, 1);
  try {
    TypeSystem types(read_metadata({record.data(), record.size()}));
    FAIL() << "accepted an undeclared field type";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("x.Event.thing"), std::string::npos) << e.what();
  }
}

// Three appends of pools and events, as the agent writes them.
std::string write_nmprof_file(const std::string& name) {
  std::string path = testing::temp_path(name);
  int fd = open_new(path);
  NmprofChunk chunk(fd, 4242);
  chunk.process(1, "./app --flag");
  chunk.setting("nativemem", "524288");
  uint64_t worker = chunk.thread("worker-1", 4243);
  uint64_t stack = chunk.stack({{"parse", "app"}, {"main", "app"}});
  chunk.malloc(kTestClock.start_ticks + 1000, worker, stack, 0x7F0012345678, 64, 4096.5f);
  chunk.append(kTestClock.start_ticks + 1000);
  uint64_t second = chunk.stack({{"load", "libfoo.so"}, {"parse", "app"}, {"main", "app"}}, true);
  chunk.malloc(kTestClock.start_ticks + 2000, worker, second, 0x1000, 1 << 20, 1.0f);
  chunk.free(kTestClock.start_ticks + 3000, worker, 0x7F0012345678);
  chunk.append(kTestClock.start_ticks + 3000);
  chunk.statistics(kTestClock.start_ticks + 4000, {{"samples", 2}, {"agentMemory", 8192}});
  chunk.append(kTestClock.start_ticks + 4000);
  close(fd);
  return path;
}

TEST(RecordingReader, AFileThatChangesWhileItIsReadEndsTheWalkInsteadOfLoopingInPlace) {
  // A looping session punches out what it read of a recording while `report` may be
  // reading it (mapped): the sizes the first pass saw are zeros by the second.
  std::vector<uint8_t> bytes = testing::read_file(write_nmprof_file("changing.jfr"));
  Recording recording(bytes);
  size_t events = 0;
  recording.for_each_chunk([&](const Chunk& chunk) {
    std::fill(bytes.begin() + kChunkHeaderSize, bytes.end(), uint8_t{0});
    chunk.for_each_event([&](const Event&) { events++; });
  });
  EXPECT_EQ(events, 0u);
  ASSERT_EQ(recording.warnings().size(), 1u);
  EXPECT_EQ(recording.warnings()[0], "chunk 1 (offset 0): changed while it was read: its records from offset 68 on "
                                     "are left out");
}

TEST(RecordingReader, ReadsEventsAndResolvesPoolsOfAnNmprofChunk) {
  Seen seen = read_all(write_nmprof_file("basic.jfr"));
  EXPECT_TRUE(seen.warnings.empty()) << seen.warnings[0];
  ASSERT_EQ(seen.headers.size(), 1u);
  EXPECT_EQ(seen.headers[0].major, 2);
  EXPECT_EQ(seen.headers[0].start_nanos, static_cast<int64_t>(kTestClock.start_nanos));
  EXPECT_EQ(seen.headers[0].duration_nanos, 4000);

  ASSERT_EQ(seen.count(s::kMallocName), 2u);
  const SeenEvent& first = seen.events[2];  // after the process and setting events
  ASSERT_EQ(first.type, s::kMallocName);
  EXPECT_EQ(first.start_nanos, static_cast<int64_t>(kTestClock.start_nanos) + 1000);
  EXPECT_EQ(static_cast<uint64_t>(first.field("address").integer()), 0x7F0012345678u);
  EXPECT_EQ(first.field("size").integer(), 64);
  EXPECT_EQ(first.field("weight").number(), 4096.5);
  EXPECT_EQ(first.thread_name, "worker-1");
  EXPECT_EQ(first.frames, (std::vector<std::string>{"parse", "main"}));

  const SeenEvent& second = seen.events[3];
  EXPECT_EQ(second.frames, (std::vector<std::string>{"load", "parse", "main"}));
  EXPECT_EQ(second.field("size").integer(), 1 << 20);

  ASSERT_EQ(seen.count(s::kFreeName), 1u);
  EXPECT_EQ(seen.events[4].field("address").integer(), 0x7F0012345678);
  EXPECT_TRUE(seen.events[4].frames.empty());

  const SeenEvent& process = seen.events[0];
  ASSERT_EQ(process.type, s::kProcessName);
  EXPECT_EQ(process.field("pid").integer(), 4242);
  EXPECT_EQ(process.field("commandLine").string(), "./app --flag");
  EXPECT_EQ(seen.events.back().field("agentMemory").integer(), 8192);
}

TEST(RecordingReader, BindingFillsOnlyTheNamedFields) {
  std::string path = write_nmprof_file("binding.jfr");
  auto bytes = testing::read_file(path);
  Recording recording(bytes);
  std::vector<uint64_t> sizes;
  bool weight_absent_on_free = false;
  recording.for_each_chunk([&](const Chunk& chunk) {
    FieldBinding mallocs(*chunk.types().find(s::kMallocName), {"size", "nosuchfield"});
    FieldBinding frees(*chunk.types().find(s::kFreeName), {"address", "weight"});
    Value slots[2];
    chunk.for_each_event([&](const Event& e) {
      if (e.type().name == s::kMallocName) {
        e.read(mallocs, slots);
        sizes.push_back(static_cast<uint64_t>(slots[0].integer()));
        EXPECT_TRUE(slots[1].is_null());
      } else if (e.type().name == s::kFreeName) {
        e.read(frees, slots);
        weight_absent_on_free = !frees.has(1) && slots[1].is_null() && frees.has(0);
      }
    });
  });
  EXPECT_EQ(sizes, (std::vector<uint64_t>{64, 1 << 20}));
  EXPECT_TRUE(weight_absent_on_free);
}

TEST(RecordingReader, ReadsConcatenatedChunksWithTheirOwnPools) {
  std::string path = testing::temp_path("two-chunks.jfr");
  int fd = open_new(path);
  for (int64_t pid : {100, 200}) {
    NmprofChunk chunk(fd, pid);
    chunk.process(1, "proc" + std::to_string(pid));
    uint64_t t = chunk.thread("t" + std::to_string(pid), pid);
    uint64_t st = chunk.stack({{"f" + std::to_string(pid), "lib"}});
    for (int i = 0; i < static_cast<int>(pid / 100); i++)
      chunk.malloc(kTestClock.start_ticks + i, t, st, 0x100 + i, 10, 1);
    chunk.append(kTestClock.start_ticks + 10);
  }
  close(fd);
  Seen seen = read_all(path);
  EXPECT_TRUE(seen.warnings.empty());
  ASSERT_EQ(seen.headers.size(), 2u);
  std::vector<std::string> first_frames;
  size_t mallocs_in_second = 0;
  for (const auto& e : seen.events) {
    if (e.type != s::kMallocName) continue;
    if (e.chunk == 0) {
      EXPECT_EQ(e.thread_name, "t100");
      first_frames = e.frames;
    } else {
      EXPECT_EQ(e.thread_name, "t200");
      EXPECT_EQ(e.frames, std::vector<std::string>{"f200"});
      mallocs_in_second++;
    }
  }
  EXPECT_EQ(first_frames, std::vector<std::string>{"f100"});
  EXPECT_EQ(mallocs_in_second, 2u);
}

// A type system beyond nmprof's: strings, arrays, an inline struct, a pool type
// that references itself.
enum TestTypes : uint64_t { kBool = 4, kInt = 10, kLong = 11, kString = 20, kPoint = 50, kNode = 51 };
enum TestEvents : uint64_t { kStringsEvent = 100, kArraysEvent = 101 };

Metadata test_metadata() {
  Metadata m;
  for (auto [name, id] : {std::pair{"boolean", kBool}, {"int", kInt}, {"long", kLong}, {"java.lang.String", kString}})
    m.add({name, id, "", false, {}, {}});
  m.add({"test.Point", kPoint, "", false, {}, {field("x", kInt), field("y", kInt)}});
  m.add({"test.Node",
         kNode,
         "",
         false,
         {},
         {field("name", kString), field("next", kNode, true), field("point", kPoint)}});
  TypeDecl strings{"test.Strings", kStringsEvent, "jdk.jfr.Event", false, {}, {field("startTime", kLong)}};
  for (int i = 0; i < 7; i++) strings.fields.push_back(field("s" + std::to_string(i), kString));
  m.add(strings);
  m.add({"test.Arrays",
         kArraysEvent,
         "jdk.jfr.Event",
         false,
         {},
         {field("startTime", kLong), field("numbers", kInt, false, true), field("nodes", kNode, true, true),
          field("point", kPoint)}});
  return m;
}

void put_raw(ByteBuffer& b, std::initializer_list<uint8_t> bytes) {
  for (uint8_t x : bytes) b.put_u8(x);
}

TEST(RecordingReader, DecodesAllSixStringEncodings) {
  std::string path = testing::temp_path("strings.jfr");
  int fd = open_new(path);
  ChunkWriter writer;
  ASSERT_TRUE(writer.begin(fd, test_metadata(), kTestClock));
  ConstantPools pools;
  ByteBuffer& hello = pools.add_entry(kString);
  hello.put_varint(7);
  hello.put_string("hello");
  ByteBuffer& latin = pools.add_entry(kString);  // a pool string in Latin-1
  latin.put_varint(8);
  put_raw(latin, {5, 5, 'n', 'a', 0xEF, 'v', 'e'});

  ByteBuffer fields, events;
  fields.put_varint(kTestClock.start_ticks);
  put_raw(fields, {0});                                       // null
  put_raw(fields, {1});                                       // empty
  put_raw(fields, {2, 7});                                    // pool reference
  put_raw(fields, {3, 6, 'g', 'r', 0xC3, 0xBC, 0xC3, 0x9F});  // UTF-8 "grüß"
  put_raw(fields, {4, 4, 0x41});                              // UTF-16 "A€😀": 0x41,
  fields.put_varint(0x20AC);                                  //   0x20AC,
  fields.put_varint(0xD83D);                                  //   a surrogate pair
  fields.put_varint(0xDE00);
  put_raw(fields, {5, 4, 'c', 'a', 'f', 0xE9});  // Latin-1 "café"
  put_raw(fields, {2, 8});                       // pool reference to a Latin-1 entry
  testing::put_record(events, kStringsEvent, fields);
  ASSERT_TRUE(writer.append(pools, events, kTestClock.start_ticks + 1));
  close(fd);

  Seen seen = read_all(path);
  ASSERT_EQ(seen.events.size(), 1u);
  const SeenEvent& v = seen.events[0];
  EXPECT_TRUE(v.field("s0").is_null());
  EXPECT_EQ(v.field("s1").kind(), Value::Kind::String);
  EXPECT_EQ(v.field("s1").string(), "");
  EXPECT_EQ(v.field("s2").string(), "hello");
  EXPECT_EQ(v.field("s3").string(), "gr\xC3\xBC\xC3\x9F");
  EXPECT_EQ(v.field("s4").string(), "A\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(v.field("s5").string(), "caf\xC3\xA9");
  EXPECT_EQ(v.field("s6").string(), "na\xC3\xAFve");
}

void put_node(ConstantPools& pools, uint64_t key, const std::string& name, uint64_t next, int x, int y) {
  ByteBuffer& e = pools.add_entry(kNode);
  e.put_varint(key);
  e.put_string(name);
  e.put_varint(next);
  e.put_varint(static_cast<uint32_t>(x));
  e.put_varint(static_cast<uint32_t>(y));
}

TEST(RecordingReader, DecodesArraysInlineStructsAndForwardPoolReferences) {
  std::string path = testing::temp_path("arrays.jfr");
  int fd = open_new(path);
  ChunkWriter writer;
  ASSERT_TRUE(writer.begin(fd, test_metadata(), kTestClock));
  ByteBuffer fields, events;
  fields.put_varint(kTestClock.start_ticks);
  fields.put_varint(3);
  for (int n : {1, -1, 300}) fields.put_varint(static_cast<uint32_t>(n));
  fields.put_varint(2);
  fields.put_varint(1);
  fields.put_varint(2);
  fields.put_varint(3);
  fields.put_varint(static_cast<uint32_t>(-4));
  testing::put_record(events, kArraysEvent, fields);
  // The event comes first; its pool entries follow in two later checkpoints, and
  // node 1 points to node 2 before node 2 is written (and node 2 back to node 1).
  ASSERT_TRUE(writer.append(ConstantPools(), events, kTestClock.start_ticks + 1));
  ConstantPools first, second;
  put_node(first, 1, "first", 2, 1, 2);
  ASSERT_TRUE(writer.append(first, ByteBuffer(), kTestClock.start_ticks + 2));
  put_node(second, 2, "second", 1, 5, 6);
  ASSERT_TRUE(writer.append(second, ByteBuffer(), kTestClock.start_ticks + 3));
  close(fd);

  auto bytes = testing::read_file(path);
  Recording recording(bytes);
  int events_seen = 0;
  recording.for_each_chunk([&](const Chunk& chunk) {
    chunk.for_each_event([&](const Event& e) {
      events_seen++;
      Value v = e.value();
      std::vector<int64_t> numbers;
      for (const auto& n : v.field("numbers").elements()) numbers.push_back(n.integer());
      EXPECT_EQ(numbers, (std::vector<int64_t>{1, -1, 300}));
      EXPECT_EQ(v.field("point").field("x").integer(), 3);
      EXPECT_EQ(v.field("point").field("y").integer(), -4);
      const auto& nodes = v.field("nodes").elements();
      ASSERT_EQ(nodes.size(), 2u);
      Value first_node = chunk.resolve(nodes[0]);
      EXPECT_EQ(first_node.field("name").string(), "first");
      EXPECT_EQ(first_node.field("point").field("y").integer(), 2);
      Value next = chunk.resolve(first_node.field("next"));
      EXPECT_EQ(next.field("name").string(), "second");
      EXPECT_EQ(chunk.resolve(next.field("next")).field("name").string(), "first");
      EXPECT_EQ(chunk.resolve(nodes[1]).field("point").field("x").integer(), 5);
    });
  });
  EXPECT_EQ(events_seen, 1);
  EXPECT_TRUE(recording.warnings().empty());
}

TEST(RecordingReader, RejectsFilesThatAreNotJfr) {
  auto expect_error = [](std::vector<uint8_t> bytes, const std::string& message) {
    try {
      Recording r(bytes);
      FAIL() << "accepted: " << message;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error({}, "empty file");
  expect_error({'h', 'e', 'l', 'l', 'o', '\n'}, "not a JFR file");
  std::vector<uint8_t> file = testing::read_file(write_nmprof_file("versions.jfr"));
  expect_error(std::vector<uint8_t>(file.begin(), file.begin() + 40), "truncated file");
  file[5] = 3;
  expect_error(file, "unsupported JFR version 3.1");
  file[5] = 1;
  expect_error(file, "unsupported JFR version 1.1");
}

// Found by fuzz/report_fuzzer (fuzz/regressions/report/chunk-time-overflow): the
// report added a hostile header's start and duration, and event times past them.
TEST(RecordingReader, KeepsHostileChunkTimesInARangeThatCannotOverflow) {
  std::vector<uint8_t> file = testing::read_file(write_nmprof_file("times.jfr"));
  constexpr size_t kStartNanosOffset = 32, kDurationOffset = 40;
  for (size_t i = 0; i < 8; ++i) {
    file[kStartNanosOffset + i] = i == 0 ? 0x7f : 0xff;  // big-endian INT64_MAX
    file[kDurationOffset + i] = i == 0 ? 0x7f : 0xff;
  }
  Seen seen = read_all(file);
  ASSERT_EQ(seen.headers.size(), 1u);
  EXPECT_EQ(seen.headers[0].start_nanos, kMaxTimeNanos);
  EXPECT_EQ(seen.headers[0].duration_nanos, 0);
  ASSERT_FALSE(seen.events.empty());
  for (const SeenEvent& e : seen.events) EXPECT_EQ(e.start_nanos, kMaxTimeNanos) << e.type;

  ChunkHeader header = seen.headers[0];
  header.start_nanos = 0;
  EXPECT_EQ(header.ticks_to_nanos(INT64_MIN), 0);
  EXPECT_EQ(header.ticks_to_nanos(INT64_MAX), kMaxTimeNanos);
}

TEST(ChunkHeaderClock, ANanosecondClockIsExactFarFromTheChunkStart) {
  // A chunk of run --loop starts its clock at its window, and holds the process's
  // description from 99 s before: scaled through a double, that time came out a
  // nanosecond off in some chunks, and the report split the process in two.
  ChunkHeader header;
  header.start_nanos = 1'796'647'148'224'801'217;
  header.start_ticks = 55'350'671'755'171;
  header.ticks_per_second = 1'000'000'000;
  EXPECT_EQ(header.ticks_to_nanos(header.start_ticks - 99'256'898'563), header.start_nanos - 99'256'898'563);
}

size_t malloc_count(const std::vector<uint8_t>& bytes, std::vector<std::string>* warnings = nullptr) {
  Seen seen = read_all(bytes);
  if (warnings) *warnings = seen.warnings;
  return seen.count(s::kMallocName);
}

TEST(RecordingReader, ReadsWhatPrecedesEveryCutOfATruncatedFile) {
  // Ten appends of one malloc each; append_ends[i] = file size after append i.
  std::string path = testing::temp_path("cut.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 7);
  std::vector<size_t> append_ends;
  size_t metadata_end = chunk.bytes_written();
  uint64_t t = chunk.thread("main", 7);
  for (int i = 0; i < 10; i++) {
    uint64_t st = chunk.stack({{"f" + std::to_string(i), "app"}});
    chunk.malloc(kTestClock.start_ticks + i, t, st, 0x1000 * (i + 1), 100, 1);
    chunk.append(kTestClock.start_ticks + i);
    append_ends.push_back(chunk.bytes_written());
  }
  close(fd);
  std::vector<uint8_t> file = testing::read_file(path);
  ASSERT_EQ(file.size(), append_ends.back());
  ASSERT_EQ(malloc_count(file), 10u);

  for (size_t cut = kChunkHeaderSize; cut < file.size(); cut++) {
    std::vector<uint8_t> part(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut));
    std::vector<std::string> warnings;
    size_t n = malloc_count(part, &warnings);
    ASSERT_FALSE(warnings.empty()) << "no warning at cut " << cut;
    size_t complete = 0;
    for (size_t end : append_ends) complete += end <= cut;
    if (cut < metadata_end) {
      ASSERT_EQ(n, 0u);
    }
    // Every malloc whose append is complete is read (an append ends with its events).
    ASSERT_EQ(n, complete) << "cut " << cut;
  }
}

TEST(RecordingReader, AnAppendThatFailsIsCutOffAndTheFileStaysWhole) {
  std::string path = testing::temp_path("full.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 7);
  uint64_t t = chunk.thread("main", 7);
  uint64_t st = chunk.stack({{"before", "app"}});
  for (int i = 0; i < 10; i++) chunk.malloc(kTestClock.start_ticks + i, t, st, 0x1000 * (i + 1), 100, 1);
  chunk.append(kTestClock.start_ticks + 10);
  size_t complete = chunk.bytes_written();
  // A file size limit fails the next write part-way, as a full disk does (EFBIG for ENOSPC).
  struct rlimit saved;
  getrlimit(RLIMIT_FSIZE, &saved);
  auto previous = signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = {complete + 100, saved.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  uint64_t later = chunk.stack({{"after", "app"}});
  for (int i = 0; i < 100; i++) chunk.malloc(kTestClock.start_ticks + 20, t, later, 0x100000 + i, 100, 1);
  EXPECT_THROW(chunk.append(kTestClock.start_ticks + 20), std::runtime_error);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous);
  close(fd);

  std::vector<uint8_t> file = testing::read_file(path);
  EXPECT_EQ(file.size(), complete);
  std::vector<std::string> warnings;
  EXPECT_EQ(malloc_count(file, &warnings), 10u);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(RecordingReader, ReadsRecordsPastAStaleHeaderAfterAKilledWriter) {
  // The state a crash between writing an append and patching the header leaves: the
  // header still describes append 1, the file holds append 2 and half of append 3.
  std::string path = testing::temp_path("killed.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 9);
  uint64_t t = chunk.thread("main", 9);
  uint64_t st = chunk.stack({{"f", "app"}});
  chunk.malloc(kTestClock.start_ticks + 1, t, st, 0x10, 1, 1);
  chunk.append(kTestClock.start_ticks + 1);
  std::vector<uint8_t> header_after_first(kChunkHeaderSize);
  ASSERT_EQ(pread(fd, header_after_first.data(), kChunkHeaderSize, 0), static_cast<ssize_t>(kChunkHeaderSize));
  uint64_t other = chunk.stack({{"g", "app"}});
  chunk.malloc(kTestClock.start_ticks + 2, t, other, 0x20, 2, 1);
  chunk.append(kTestClock.start_ticks + 2);
  chunk.malloc(kTestClock.start_ticks + 3, t, other, 0x30, 3, 1);
  chunk.append(kTestClock.start_ticks + 3);
  close(fd);
  std::vector<uint8_t> file = testing::read_file(path);
  std::copy(header_after_first.begin(), header_after_first.end(), file.begin());
  file.resize(file.size() - 3);

  Seen seen = read_all(file);
  ASSERT_EQ(seen.count(s::kMallocName), 2u);
  EXPECT_EQ(seen.events[1].frames, std::vector<std::string>{"g"});  // pools of the unpatched append
  ASSERT_EQ(seen.warnings.size(), 2u);
  EXPECT_NE(seen.warnings[0].find("past the size in its header"), std::string::npos) << seen.warnings[0];
  EXPECT_NE(seen.warnings[1].find("truncated"), std::string::npos) << seen.warnings[1];
}

TEST(RecordingReader, SkipsADamagedEventAndStopsAtARecordOfSizeZero) {
  std::string path = testing::temp_path("damaged.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 11);
  uint64_t t = chunk.thread("main", 11);
  uint64_t st = chunk.stack({{"f", "app"}});
  for (int i = 0; i < 3; i++) chunk.malloc(kTestClock.start_ticks + i, t, st, 0x10 + i, 1, 1);
  chunk.append(kTestClock.start_ticks + 3);
  size_t second_append = chunk.bytes_written();
  for (int i = 0; i < 2; i++) chunk.malloc(kTestClock.start_ticks + 4 + i, t, st, 0x20 + i, 1, 1);
  chunk.append(kTestClock.start_ticks + 6);
  close(fd);
  std::vector<uint8_t> file = testing::read_file(path);

  // All malloc records here have one length; the second append (no new pool entries,
  // so no checkpoint) starts with one, and the third malloc ends where it starts.
  const uint8_t record = file[second_append];
  const size_t third = second_append - record;
  ASSERT_EQ(file[third], record);
  std::vector<uint8_t> short_event = file;
  short_event[third] = 6;                                     // a record too short for its fields: decoding it fails
  short_event[third + 6] = static_cast<uint8_t>(record - 6);  // the rest: a record of an unknown type
  short_event[third + 7] = 0x7f;
  Seen damaged = read_all(short_event);
  EXPECT_EQ(damaged.count(s::kMallocName), 4u);
  ASSERT_EQ(damaged.warnings.size(), 1u);
  EXPECT_NE(damaged.warnings[0].find("skipped 1 damaged event record"), std::string::npos) << damaged.warnings[0];

  std::vector<uint8_t> zero = file;
  zero[third] = 0;
  Seen stopped = read_all(zero);
  EXPECT_EQ(stopped.count(s::kMallocName), 2u);
  ASSERT_FALSE(stopped.warnings.empty());
  EXPECT_NE(stopped.warnings[0].find("(size 0)"), std::string::npos) << stopped.warnings[0];
}

TEST(RecordingReader, ARecordSizeReachingIntoTheNextChunkDoesNotSwallowIt) {
  std::string path = testing::temp_path("crossing.jfr");
  int fd = open_new(path);
  size_t last_record = 0;
  for (int64_t pid : {1, 2}) {
    NmprofChunk chunk(fd, pid);
    uint64_t t = chunk.thread("main", pid), st = chunk.stack({{"f", "app"}});
    chunk.malloc(kTestClock.start_ticks, t, st, 0x10, 1, 1);
    chunk.append(kTestClock.start_ticks + 1);
    size_t before = chunk.bytes_written();
    chunk.malloc(kTestClock.start_ticks + 1, t, st, 0x20, 1, 1);  // an append without pool entries
    chunk.append(kTestClock.start_ticks + 2);
    if (pid == 1) last_record = before;
  }
  close(fd);
  std::vector<uint8_t> file = testing::read_file(path);
  file[last_record] = 0x7f;  // the first chunk's last record now claims 127 bytes
  Seen seen = read_all(file);
  ASSERT_EQ(seen.headers.size(), 2u);
  EXPECT_EQ(seen.count(s::kMallocName), 3u);
  ASSERT_FALSE(seen.warnings.empty());
  EXPECT_NE(seen.warnings[0].find("crosses the end of the chunk"), std::string::npos) << seen.warnings[0];
}

TEST(RecordingReader, ResynchronisesOnTheNextChunkAfterGarbage) {
  std::string path = testing::temp_path("garbage.jfr");
  int fd = open_new(path);
  {
    NmprofChunk first(fd, 1);
    first.malloc(kTestClock.start_ticks, first.thread("a", 1), first.stack({{"f", "app"}}), 0x10, 1, 1);
    first.append(kTestClock.start_ticks + 1);
  }
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0x01, 0x02};
  ASSERT_EQ(pwrite(fd, junk, sizeof junk, lseek(fd, 0, SEEK_END)), static_cast<ssize_t>(sizeof junk));
  {
    NmprofChunk second(fd, 2);
    second.malloc(kTestClock.start_ticks, second.thread("b", 2), second.stack({{"g", "app"}}), 0x10, 1, 1);
    second.append(kTestClock.start_ticks + 1);
  }
  close(fd);
  Seen seen = read_all(path);
  EXPECT_EQ(seen.headers.size(), 2u);
  EXPECT_EQ(seen.count(s::kMallocName), 2u);
  ASSERT_FALSE(seen.warnings.empty());
  EXPECT_NE(seen.warnings.back().find("next chunk"), std::string::npos) << seen.warnings.back();
}

}  // namespace
}  // namespace nmprof::jfr
