// Building the profile model from recordings: nmprof's multi-process files and a
// file shaped like async-profiler's (version 2.0, no weights, hook frames on top).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <string>
#include <vector>

#include "formats/jfr/reading/chunk_header.h"
#include "profile/allocator_frames.h"
#include "profile/frame_folding.h"
#include "profile/jfr_profile.h"
#include "profile/source_lines.h"
#include "tests/jfr_reader/test_recordings.h"

namespace nmprof::profile {
namespace {

using testing::kTestClock;
using testing::NmprofChunk;
namespace s = jfr::schema;

const int64_t kStart = kTestClock.start_ticks;
const int64_t kStartNanos = static_cast<int64_t>(kTestClock.start_nanos);

int open_new(const std::string& path) { return ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644); }

std::vector<std::string> functions(const Profile& p, uint32_t stack) {
  std::vector<std::string> names;
  for (uint32_t f : p.stacks()[stack].frames) names.push_back(p.frames()[f].function);
  return names;
}

// nmprof's metadata with one more statistics field, as a later agent may write.
jfr::Metadata metadata_with_more_statistics() {
  jfr::Metadata m;
  for (jfr::TypeDecl t : s::nmprof_metadata().types()) {
    if (t.name == s::kStatisticsName)
      t.fields.push_back({"futureCounter",
                          s::kLong,
                          false,
                          false,
                          {{s::kLabel, {{"value", "Future Counter"}}}, {s::kDataAmount, {{"value", "BYTES"}}}}});
    m.add(t);
  }
  return m;
}

TEST(ProfileFromNmprof, AttributesEachChunkToItsProcess) {
  std::string path = testing::temp_path("multi.jfr");
  int fd = open_new(path);
  {
    NmprofChunk parent(fd, 100, metadata_with_more_statistics());
    parent.process(1, "./server --port 80");
    parent.setting("nativemem", "524288");
    parent.setting("live", "true");
    uint64_t main = parent.thread("server", 100);
    uint64_t st =
        parent.stack({{"malloc", "libc.so.6"}, {"make_node", "server"}, {"main", "server"}});
    parent.malloc(kStart + 10, main, st, 0xA000, 100, 5242.88f);
    parent.malloc(kStart + 20, main, st, 0xB000, 1 << 20, 1.0f);
    parent.statistics(kStart + 30, {{"samples", 2}, {"trackingMemory", 1024}, {"futureCounter", 5}});
    parent.append(kStart + 30);
    parent.free(kStart + 40, main, 0xA000);
    parent.statistics(kStart + 50, {{"samples", 3},
                                    {"lostSamples", 1},
                                    {"untrackedSamples", 7},
                                    {"trackingMemory", 2048},
                                    {"futureCounter", 6}});  // the last one counts
    parent.append(kStart + 1'000'000'000);
  }
  {
    NmprofChunk child(fd, 101);
    child.process(100, "./server --worker");
    uint64_t worker = child.thread("worker", 101);
    uint64_t st = child.stack({{"__libc_malloc", "libc.so.6"}, {"make_node", "server"}, {"main", "server"}});
    child.malloc(kStart + 500, worker, st, 0xA000, 64, 2.0f);
    child.append(kStart + 600);
  }
  close(fd);

  Profile p = read_profile(path);
  EXPECT_TRUE(p.warnings.empty()) << p.warnings[0];
  ASSERT_EQ(p.processes.size(), 2u);
  const Process& server = p.processes[0];
  EXPECT_EQ(server.pid, 100);
  EXPECT_EQ(server.parent_pid, 1);
  EXPECT_EQ(server.command, "./server --port 80");
  EXPECT_EQ(server.executable, "./server");
  EXPECT_EQ(server.host_name, "testhost");
  EXPECT_EQ(server.agent_version, "0.1.0");
  EXPECT_EQ(server.start_nanos, kStartNanos);
  EXPECT_EQ(server.end_nanos, kStartNanos + 1'000'000'000);
  EXPECT_EQ(server.sampling_interval(), 524288u);
  EXPECT_TRUE(server.live_tracking());
  EXPECT_TRUE(server.weighted);
  ASSERT_EQ(server.statistics.size(), s::nmprof_metadata().find(s::kStatisticsName)->fields.size());
  for (const char* name : {"samples", "lostSamples", "untrackedSamples", "trackingMemory", "futureCounter"})
    ASSERT_NE(server.statistic(name), nullptr) << name;
  EXPECT_EQ(server.statistic("samples")->value, 3);
  EXPECT_EQ(server.statistic("lostSamples")->label, "Lost Samples");
  EXPECT_EQ(server.statistic("untrackedSamples")->value, 7);
  EXPECT_FALSE(server.statistic("untrackedSamples")->bytes);
  EXPECT_EQ(server.statistic("trackingMemory")->value, 2048);
  EXPECT_TRUE(server.statistic("trackingMemory")->bytes);
  EXPECT_EQ(server.statistic("futureCounter")->value, 6);
  EXPECT_EQ(server.statistic("futureCounter")->label, "Future Counter");
  EXPECT_TRUE(server.statistic("futureCounter")->bytes);

  const Process& worker = p.processes[1];
  EXPECT_EQ(worker.pid, 101);
  EXPECT_EQ(worker.parent_pid, 100);
  EXPECT_EQ(worker.end_nanos, kStartNanos + 600);
  EXPECT_TRUE(worker.settings.empty());
  EXPECT_TRUE(worker.statistics.empty());

  // The parent's two samples share thread and stack: one allocation summing both.
  ASSERT_EQ(p.allocations().size(), 2u);
  const Allocation& server_allocation = p.allocations()[0];
  EXPECT_EQ(server_allocation.process, 0u);
  EXPECT_EQ(server_allocation.allocated.samples, 2u);
  EXPECT_NEAR(server_allocation.allocated.bytes, 524288 + (1 << 20), 1);
  EXPECT_NEAR(server_allocation.allocated.count, 5242.88 + 1, 0.01);
  EXPECT_EQ(server_allocation.source, AllocationSource::Native);
  EXPECT_EQ(p.threads()[server_allocation.thread].name, "server");
  EXPECT_EQ(p.threads()[server_allocation.thread].os_thread_id, 100);
  EXPECT_EQ(functions(p, server_allocation.stack), (std::vector<std::string>{"make_node", "main"}));
  // The free at 0xA000 took the first sample: the second is live.
  EXPECT_EQ(server_allocation.live.samples, 1u);
  EXPECT_DOUBLE_EQ(server_allocation.live.bytes, 1 << 20);

  const Allocation& child = p.allocations()[1];
  EXPECT_EQ(child.process, 1u);
  EXPECT_EQ(p.threads()[child.thread].process, 1u);
  // Same frames once the allocator frame is gone, so the same stack.
  EXPECT_EQ(child.stack, server_allocation.stack);
  EXPECT_EQ(p.frames()[p.stacks()[child.stack].frames[0]].container, "server");
  EXPECT_EQ(p.frames()[p.stacks()[child.stack].frames[0]].kind, FrameKind::Native);
  EXPECT_EQ(child.live.samples, 1u);  // the parent's free is not the child's

  EXPECT_EQ(p.matched_frees(), 1u);
  EXPECT_EQ(p.unmatched_frees(), 0u);
  std::vector<profile::LiveSample> live = p.live_samples();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].time_nanos, kStartNanos + 20);
  EXPECT_EQ(live[1].time_nanos, kStartNanos + 500);
}

TEST(ProfileFromNmprof, MergesChunksOfOneProcessAndKeepsUnidentifiedOnesApart) {
  std::string path = testing::temp_path("merge.jfr");
  int fd = open_new(path);
  int64_t at = kStart;  // each chunk its own sample time: chunks with the same bytes are one (a repeat)
  for (int64_t pid : {200, 200, 0}) {
    NmprofChunk chunk(fd, pid ? pid : 999);
    if (pid) chunk.process(1, "app");
    uint64_t t = chunk.thread("main", 1);
    uint64_t st = chunk.stack({{"f", "app"}}, true);
    chunk.malloc(++at, t, st, 0x10, 8, 1);
    chunk.append(kStart + 10);
  }
  close(fd);
  Profile p = read_profile(path);
  ASSERT_EQ(p.processes.size(), 2u);
  EXPECT_EQ(p.processes[0].pid, 200);
  EXPECT_EQ(p.processes[1].pid, 0);
  // The two chunks of pid 200 have one thread and stack: their samples add up.
  ASSERT_EQ(p.allocations().size(), 2u);
  EXPECT_EQ(p.allocations()[0].process, 0u);
  EXPECT_EQ(p.allocations()[0].allocated.samples, 2u);
  EXPECT_EQ(p.allocations()[1].process, 1u);
  EXPECT_TRUE(p.stacks()[p.allocations()[0].stack].truncated);
  EXPECT_NE(p.allocations()[0].thread, p.allocations()[1].thread);
}

// Appends a chunk of process `pid` ("app", thread "main", stack "f") with the events
// that events(chunk, thread, stack) adds.
template <class Events>
void append_chunk(int fd, int64_t pid, Events&& events) {
  NmprofChunk chunk(fd, pid);
  chunk.process(1, "app");
  uint64_t t = chunk.thread("main", 1);
  uint64_t st = chunk.stack({{"f", "app"}});
  events(chunk, t, st);
  chunk.append(kStart + 1000);
}

// nmprof's metadata as agents before realloc growth wrote it: profiler.Malloc without
// previousSize and liveWeight, profiler.Free without the move's fields.
jfr::Metadata metadata_before_realloc_growth() {
  jfr::Metadata m;
  for (jfr::TypeDecl t : s::nmprof_metadata().types()) {
    std::erase_if(t.fields, [](const jfr::FieldDecl& f) {
      return f.name == s::kPreviousSizeField || f.name == s::kLiveWeightField || f.name == s::kNewAddressField ||
             f.name == s::kNewSizeField || f.name == s::kNewWeightField;
    });
    m.add(t);
  }
  return m;
}

TEST(ProfileFromNmprof, ReallocSamplesCountWhatTheyAddedAndKeepTheWholeBlockLive) {
  std::string path = testing::temp_path("realloc.jfr");
  int fd = open_new(path);
  append_chunk(fd, 600, [](NmprofChunk& c, uint64_t t, uint64_t st) {
    c.malloc(kStart + 10, t, st, 0xA000, 5000, 4.0f, 3000, 2.0f);  // grew by 2000
    c.malloc(kStart + 20, t, st, 0xB000, 1000, 1.0f, 4000, 3.0f);  // shrank: adds nothing
  });
  close(fd);
  Profile p = read_profile(path);
  ASSERT_EQ(p.allocations().size(), 1u);
  const Allocation& a = p.allocations()[0];
  EXPECT_EQ(a.allocated.samples, 2u);
  EXPECT_DOUBLE_EQ(a.allocated.bytes, 4.0 * 2000);
  EXPECT_DOUBLE_EQ(a.allocated.count, 4.0 + 1.0);
  EXPECT_DOUBLE_EQ(a.live.bytes, 2.0 * 5000 + 3.0 * 1000);
  EXPECT_DOUBLE_EQ(a.live.count, 2.0 + 3.0);
  EXPECT_EQ(p.processes[a.process].counts_realloc_growth, true);
}

TEST(ProfileFromNmprof, AFreeThatMovedABlockKeepsItLiveAtItsNewAddressWithItsNewSize) {
  std::string path = testing::temp_path("moved.jfr");
  int fd = open_new(path);
  append_chunk(fd, 601, [](NmprofChunk& c, uint64_t t, uint64_t st) {
    c.malloc(kStart + 10, t, st, 0xA000, 100, 8.0f);
    c.free(kStart + 20, t, 0xA000, 0xC000, 300, 2.0f);  // moved, grown, not sampled
    c.free(kStart + 30, t, 0xC000, 0xC000, 200, 3.0f);  // shrunk in place
    c.malloc(kStart + 40, t, st, 0xD000, 50, 1.0f);
    c.free(kStart + 50, t, 0xD000, 0xE000, 60, 1.0f);
    c.free(kStart + 60, t, 0xE000);  // then freed
  });
  close(fd);
  Profile p = read_profile(path);
  ASSERT_EQ(p.allocations().size(), 1u);
  const Allocation& a = p.allocations()[0];
  EXPECT_DOUBLE_EQ(a.allocated.bytes, 8.0 * 100 + 1.0 * 50);  // moves allocate nothing
  EXPECT_EQ(a.live.samples, 1u);
  EXPECT_DOUBLE_EQ(a.live.bytes, 3.0 * 200);
  std::vector<LiveSample> live = p.live_samples();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].time_nanos, kStartNanos + 30);  // its last move
  EXPECT_EQ(p.matched_frees(), 4u);
  EXPECT_EQ(p.unmatched_frees(), 0u);
  auto peak = p.time_series().live_peak();
  ASSERT_TRUE(peak);
  EXPECT_DOUBLE_EQ(peak->live_bytes, 8.0 * 100);  // before the first move: moves change live bytes
  EXPECT_EQ(peak->time_nanos, kStartNanos + 10);
}

TEST(ProfileFromNmprof, RecordingsWithoutReallocFieldsReadAsBefore) {
  std::string path = testing::temp_path("old.jfr");
  int fd = open_new(path);
  {
    NmprofChunk chunk(fd, 602, metadata_before_realloc_growth());
    chunk.process(1, "app");
    uint64_t t = chunk.thread("main", 1);
    uint64_t st = chunk.stack({{"f", "app"}});
    chunk.malloc(kStart + 10, t, st, 0xA000, 5000, 4.0f, 3000, 2.0f);  // the fields are not written
    chunk.malloc(kStart + 20, t, st, 0xB000, 700, 1.5f);
    chunk.free(kStart + 30, t, 0xB000, 0xC000, 9, 9.0f);
    chunk.append(kStart + 1000);
  }
  close(fd);
  Profile p = read_profile(path);
  ASSERT_EQ(p.allocations().size(), 1u);
  const Allocation& a = p.allocations()[0];
  EXPECT_DOUBLE_EQ(a.allocated.bytes, 4.0 * 5000 + 1.5 * 700);
  EXPECT_DOUBLE_EQ(a.live.bytes, 4.0 * 5000);
  EXPECT_EQ(p.matched_frees(), 1u);
  EXPECT_EQ(p.processes[a.process].counts_realloc_growth, false);
}

// The times of the samples still live, and how many frees found a sample.
struct Pairing {
  std::vector<int64_t> live;
  uint64_t matched = 0, unmatched = 0;
  bool operator==(const Pairing&) const = default;
};

Pairing pairing_of(const std::string& path) {
  Profile p = read_profile(path);
  Pairing r{{}, p.matched_frees(), p.unmatched_frees()};
  for (const LiveSample& s : p.live_samples()) r.live.push_back(s.time_nanos - kStartNanos);
  return r;
}

// The agent writes each thread's events from one of several buffers, so a chunk need
// not hold them in time order: frees are paired by time, not by place in the file.
TEST(ProfileFromNmprof, PairsFreesByTimeWhateverTheirPlaceInTheFile) {
  std::string path = testing::temp_path("out-of-order.jfr");
  int fd = open_new(path);
  append_chunk(fd, 400, [](NmprofChunk& c, uint64_t t, uint64_t st) {
    c.malloc(kStart + 10, t, st, 0xA0, 8, 1);
    c.free(kStart + 40, t, 0xA0);  // frees the block made at 30
    c.free(kStart + 20, t, 0xA0);  // frees the block made at 10
    c.malloc(kStart + 30, t, st, 0xA0, 16, 1);
    c.free(kStart + 60, t, 0xB0);  // before its allocation in the file
    c.malloc(kStart + 50, t, st, 0xB0, 32, 1);
    c.malloc(kStart + 70, t, st, 0xC0, 64, 1);  // live
  });
  close(fd);
  EXPECT_EQ(pairing_of(path), (Pairing{{70}, 3, 0}));
}

// A process's chunks (an image before and after exec) pair with each other, also when
// a chunk holds events older than the last ones of the chunk before; other pids' not.
TEST(ProfileFromNmprof, PairsFreesAcrossTheChunksOfAProcessOnly) {
  std::string path = testing::temp_path("chunks-out-of-order.jfr");
  int fd = open_new(path);
  append_chunk(fd, 500, [](NmprofChunk& c, uint64_t t, uint64_t st) {
    c.malloc(kStart + 10, t, st, 0xA0, 8, 1);
    c.free(kStart + 40, t, 0xA0);  // frees the block made at 30, in the next chunk
    c.malloc(kStart + 50, t, st, 0xB0, 8, 1);
  });
  append_chunk(fd, 500, [](NmprofChunk& c, uint64_t t, uint64_t st) {
    c.free(kStart + 20, t, 0xA0);  // frees the block made at 10, in the chunk before
    c.malloc(kStart + 30, t, st, 0xA0, 8, 1);
    c.free(kStart + 60, t, 0xB0);  // frees the block made at 50, in the chunk before
    c.malloc(kStart + 70, t, st, 0xC0, 8, 1);
  });
  append_chunk(fd, 501, [](NmprofChunk& c, uint64_t t, uint64_t) {
    c.free(kStart + 80, t, 0xC0);  // another process's block of that address: not this one's
  });
  close(fd);
  EXPECT_EQ(pairing_of(path), (Pairing{{70}, 3, 1}));
}

TEST(ProfileFromNmprof, KeepsWhatATruncatedFileHoldsAndWarns) {
  std::string path = testing::temp_path("truncated.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 300);
  chunk.process(1, "app");
  uint64_t t = chunk.thread("main", 1);
  uint64_t st = chunk.stack({{"f", "app"}});
  chunk.malloc(kStart + 1, t, st, 0x10, 8, 1);
  chunk.append(kStart + 2);
  chunk.malloc(kStart + 3, t, st, 0x20, 8, 1);
  chunk.append(kStart + 4);
  close(fd);
  auto bytes = testing::read_file(path);
  bytes.resize(bytes.size() - 2);
  Profile p = build_profile(bytes);
  ASSERT_EQ(p.allocations().size(), 1u);
  EXPECT_EQ(p.allocations()[0].allocated.samples, 1u);
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_NE(p.warnings[0].find("truncated"), std::string::npos) << p.warnings[0];
}

// The reader maps frame types and allocators back through the schema's own tables:
// every name the writer writes reads as its key, and the reader's Allocator is the key.
TEST(ProfileFromNmprof, ReadsEveryFrameTypeAndAllocatorTheWriterNames) {
  for (int k = 0; k < s::kFrameTypeCount; k++) {
    auto key = static_cast<s::FrameTypeKey>(k);
    EXPECT_EQ(s::frame_type_key(s::frame_type_name(key)), key) << s::frame_type_name(key);
  }
  for (int k = 0; k < s::kAllocatorCount; k++) {
    auto key = static_cast<s::AllocatorKey>(k);
    EXPECT_EQ(s::allocator_key(s::allocator_name(key)), key) << s::allocator_name(key);
    EXPECT_STREQ(allocator_name(static_cast<Allocator>(k)), s::allocator_name(key));
  }
  EXPECT_EQ(s::frame_type_key("Quantum"), std::nullopt);
  EXPECT_EQ(s::allocator_key("jemalloc"), std::nullopt);
}

// nmprof's metadata before modules said which build they were: nmprof.Module had a
// name and a path only.
jfr::Metadata metadata_without_module_builds() {
  jfr::Metadata m;
  for (jfr::TypeDecl t : s::nmprof_metadata().types()) {
    if (t.name == s::kModuleName) t.fields.resize(3);  // startTime, name, path
    m.add(t);
  }
  return m;
}

__attribute__((noinline)) int line_probe(int x) { return x * 3 + 1; }

// This test program as a module with DWARF lines: its path, and line_probe's start
// as the return address of a frame (the call before it is line_probe's first line).
struct ThisProgram {
  std::string path = std::filesystem::read_symlink("/proc/self/exe");
  uint32_t return_address;
  std::string build_id = SourceLines().build_id(path);
  struct stat status;

  ThisProgram() {
    Dl_info info;
    dladdr(reinterpret_cast<void*>(&line_probe), &info);
    return_address = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&line_probe) -
                                           reinterpret_cast<uintptr_t>(info.dli_fbase) + 1);
    stat(path.c_str(), &status);
  }
  testing::ModuleBuild build() const {
    return {build_id, static_cast<uint64_t>(status.st_size),
            int64_t{status.st_mtim.tv_sec} * 1'000'000'000 + status.st_mtim.tv_nsec};
  }
};

// A recording of one sample in line_probe (named `name`), whose module is `builds` in turn.
Profile recorded_with(const std::vector<testing::ModuleBuild>& builds,
                      const jfr::Metadata& metadata = s::nmprof_metadata(), const std::string& name = "line_probe") {
  ThisProgram self;
  std::string path = testing::temp_path("module.jfr");
  int fd = open_new(path);
  NmprofChunk chunk(fd, 300, metadata);
  chunk.process(1, "app");
  for (const auto& build : builds) chunk.module("app", self.path, build);
  uint64_t t = chunk.thread("main", 1);
  chunk.malloc(kStart + 1, t, chunk.stack({{name, "app", s::kNative, self.return_address}}), 0x10, 8, 1);
  chunk.malloc(kStart + 2, t, chunk.stack({{name, "app", s::kNative, self.return_address}, {"main", "app"}}), 0x20, 8,
               1);
  chunk.append(kStart + 3);
  close(fd);
  return read_profile(path);
}

const Frame& innermost(const Profile& p) { return p.frames()[p.stacks()[p.allocations()[0].stack].frames[0]]; }

TEST(ModuleBuilds, ReadsWhichBuildEachModuleWas) {
  ThisProgram self;
  Profile p = recorded_with({self.build()});
  const ModuleFile& app = p.processes[0].modules.at("app");
  EXPECT_TRUE(app.identified);
  EXPECT_EQ(app.path, self.path);
  EXPECT_EQ(app.build_id, self.build_id);
  EXPECT_EQ(app.file_size, self.build().file_size);
  EXPECT_EQ(app.file_modified_ns, self.build().file_modified_ns);
  EXPECT_FALSE(app.ambiguous);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_GT(innermost(p).line, 0);
  EXPECT_NE(innermost(p).file.find("profile_test.cpp"), std::string::npos) << innermost(p).file;
}

TEST(ModuleBuilds, NoLinesFromAnotherBuildAndOneWarningPerModule) {
  ThisProgram self;
  testing::ModuleBuild other = self.build();
  other.build_id = std::string(40, '0');
  Profile p = recorded_with({other});
  EXPECT_EQ(innermost(p).line, -1);
  EXPECT_EQ(innermost(p).file, "");
  ASSERT_EQ(p.warnings.size(), 1u);  // two frames in the module, one warning
  EXPECT_EQ(p.warnings[0], "app: " + self.path + " is not the build that was recorded (build id " + other.build_id +
                               " recorded, " + self.build_id + " on disk): no source lines for its frames");
}

TEST(ModuleBuilds, WithoutBuildIdTheFilesSizeAndMtimeMustMatch) {
  ThisProgram self;
  testing::ModuleBuild same = self.build();
  same.build_id.clear();
  EXPECT_GT(innermost(recorded_with({same})).line, 0);
  testing::ModuleBuild older = same;
  older.file_modified_ns -= 1;
  Profile p = recorded_with({older});
  EXPECT_EQ(innermost(p).line, -1);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("is not the build that was recorded (no build id; recorded "), std::string::npos)
      << p.warnings[0];
  // The agent could not read the file when it was loaded: nothing tells the build.
  Profile unknown = recorded_with({{}});
  EXPECT_EQ(innermost(unknown).line, -1);
  ASSERT_EQ(unknown.warnings.size(), 1u);
  EXPECT_NE(unknown.warnings[0].find("has no build id, and the recording lacks its size and mtime"),
            std::string::npos)
      << unknown.warnings[0];
}

TEST(ModuleBuilds, RecordingsThatDoNotSayWhichBuildReadAsBefore) {
  ThisProgram self;
  Profile p = recorded_with({{}}, metadata_without_module_builds());
  const ModuleFile& app = p.processes[0].modules.at("app");
  EXPECT_FALSE(app.identified);
  EXPECT_EQ(app.build_id, self.build_id);  // read from the file, for pprof's mapping
  EXPECT_GT(innermost(p).line, 0);
  EXPECT_TRUE(p.warnings.empty());
}

// A library rebuilt and loaded again under its name: frames name the module, not the
// build, so neither file can give their lines.
TEST(ModuleBuilds, DifferentBuildsUnderOneNameGiveNoLines) {
  ThisProgram self;
  testing::ModuleBuild other = self.build();
  other.build_id = std::string(40, '1');
  Profile p = recorded_with({self.build(), other});
  EXPECT_TRUE(p.processes[0].modules.at("app").ambiguous);
  EXPECT_EQ(innermost(p).line, -1);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("app: different builds or files were loaded under this name"), std::string::npos) << p.warnings[0];
  EXPECT_FALSE(recorded_with({self.build(), self.build()}).processes[0].modules.at("app").ambiguous);
}

// The agent names a frame "module+0x..." when it could not read the module's file (a
// process that chrooted itself): the report names it from the file, when it is the
// build recorded.
TEST(ModuleBuilds, AFrameTheAgentCouldNotNameIsNamedFromTheRecordedBuild) {
  ThisProgram self;
  char unnamed[32];
  snprintf(unnamed, sizeof unnamed, "app+0x%x", self.return_address);
  Profile p = recorded_with({self.build()}, s::nmprof_metadata(), unnamed);
  EXPECT_NE(innermost(p).function.find("line_probe"), std::string::npos) << innermost(p).function;
  EXPECT_GT(innermost(p).line, 0);
  testing::ModuleBuild other = self.build();
  other.build_id = std::string(40, '0');
  EXPECT_EQ(innermost(recorded_with({other}, s::nmprof_metadata(), unnamed)).function, unnamed);
  char elsewhere[32];  // the form, but not of its own address: a name of the program's, left alone
  snprintf(elsewhere, sizeof elsewhere, "app+0x%x", self.return_address + 16);
  EXPECT_EQ(innermost(recorded_with({self.build()}, s::nmprof_metadata(), elsewhere)).function, elsewhere);
}

TEST(AllocatorFrames, RecognisesAllocatorsAndTheirDecorations) {
  for (const char* name : {"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
                           "__libc_malloc", "__GI___libc_malloc", "_int_malloc", "malloc_hook", "calloc_hook"})
    EXPECT_TRUE(is_allocator_frame({name, "libc.so.6", FrameKind::Native, -1, {}})) << name;
  for (const char* name : {"main", "malloc_trim_helper", "my_malloc", "xmalloc", "operator<<", "freelist_pop"})
    EXPECT_FALSE(is_allocator_frame({name, "app", FrameKind::Native, -1, {}})) << name;
  EXPECT_FALSE(is_allocator_frame({"malloc", "Foo", FrameKind::JitCompiled, 12, {}})) << "a Java method named malloc";
}

// Wrappers of the allocator are the program's view of allocation: folded by default,
// shown with --keep-frames, so never dropped while the recording is read.
TEST(AllocatorFrames, WrappersAreLeftToFolding) {
  FrameFolder defaults(true, {}), keep(false, {});
  for (const char* name : {"operator new(unsigned long)", "operator new[](unsigned long, std::nothrow_t const&)",
                           "operator delete(void*)", "_emalloc", "_emalloc_56", "_emalloc_large", "_safe_emalloc",
                           "_erealloc2", "_estrndup", "_estrdup", "__zend_malloc", "_safe_femalloc"}) {
    Frame frame{name, "libstdc++.so.6", FrameKind::Native, -1, {}};
    EXPECT_FALSE(is_allocator_frame(frame)) << name;
    EXPECT_TRUE(defaults.folds(frame)) << name;
    EXPECT_FALSE(keep.folds(frame)) << name;
  }
  EXPECT_FALSE(defaults.folds({"zend_hash_add", "php8.2", FrameKind::Native, -1, {}}));
  EXPECT_FALSE(defaults.folds({"_emalloc", "lib.php", FrameKind::Php, 3, {}})) << "a PHP function named _emalloc";
}

// --- A file shaped like async-profiler's -------------------------------------------

// Its own type ids and layouts: Class and Thread with four fields, Malloc/Free
// without weight.
enum AsyncTypes : uint64_t {
  kBool = 4,
  kInt = 10,
  kLong = 11,
  kString = 20,
  kClass = 21,
  kThread = 22,
  kFrameType = 24,
  kStackTrace = 26,
  kStackFrame = 27,
  kMethod = 28,
  kPackage = 29,
  kSymbol = 30,
  kLoader = 32,
  kMalloc = 215,
  kFree = 216,
};

jfr::FieldDecl field(std::string name, uint64_t type, bool pooled = false, bool array = false) {
  return {std::move(name), type, pooled, array, {}};
}

jfr::Metadata async_profiler_metadata() {
  jfr::Metadata m;
  for (auto [name, id] : {std::pair{"boolean", kBool}, {"int", kInt}, {"long", kLong}, {"java.lang.String", kString}})
    m.add({name, id, "", false, {}, {}});
  m.add({"java.lang.Class",
         kClass,
         "",
         false,
         {},
         {field("classLoader", kLoader, true), field("name", kSymbol, true), field("package", kPackage, true),
          field("modifiers", kInt)}});
  m.add({"java.lang.Thread",
         kThread,
         "",
         false,
         {},
         {field("osName", kString), field("osThreadId", kLong), field("javaName", kString),
          field("javaThreadId", kLong)}});
  m.add({"jdk.types.ClassLoader", kLoader, "", false, {}, {field("type", kClass, true), field("name", kSymbol, true)}});
  m.add({"jdk.types.FrameType", kFrameType, "", true, {}, {field("description", kString)}});
  m.add({"jdk.types.StackTrace",
         kStackTrace,
         "",
         false,
         {},
         {field("truncated", kBool), field("frames", kStackFrame, false, true)}});
  m.add({"jdk.types.StackFrame",
         kStackFrame,
         "",
         false,
         {},
         {field("method", kMethod, true), field("lineNumber", kInt), field("bytecodeIndex", kInt),
          field("type", kFrameType, true)}});
  m.add({"jdk.types.Method",
         kMethod,
         "",
         false,
         {},
         {field("type", kClass, true), field("name", kSymbol, true), field("descriptor", kSymbol, true),
          field("modifiers", kInt), field("hidden", kBool)}});
  m.add({"jdk.types.Package", kPackage, "", false, {}, {field("name", kSymbol, true)}});
  m.add({"jdk.types.Symbol", kSymbol, "", true, {}, {field("string", kString)}});
  m.add({"profiler.Malloc",
         kMalloc,
         "jdk.jfr.Event",
         false,
         {},
         {field("startTime", kLong), field("eventThread", kThread, true), field("stackTrace", kStackTrace, true),
          field("address", kLong), field("size", kLong)}});
  m.add({"profiler.Free",
         kFree,
         "jdk.jfr.Event",
         false,
         {},
         {field("startTime", kLong), field("eventThread", kThread, true), field("stackTrace", kStackTrace, true),
          field("address", kLong)}});
  return m;
}

struct AsyncFrame {
  const char* function;
  const char* klass;
  const char* descriptor;
  uint8_t type;  // async-profiler's frame type keys: 0 interpreted .. 3 native, 4 C++
};

// Header, metadata (id 0x7FFFFFFF), events, then the one checkpoint, version 2.0.
std::vector<uint8_t> async_profiler_file() {
  jfr::ByteBuffer chunk;
  for (size_t i = 0; i < jfr::kChunkHeaderSize; i++) chunk.put_u8(0);
  async_profiler_metadata().encode(chunk, kStart, 0x7FFFFFFF);

  const std::vector<std::vector<AsyncFrame>> stacks = {
      {{"malloc_hook", "libasyncProfiler.so", "()L;", 3}, {"my_alloc", "app", "()L;", 3}, {"main", "app", "()L;", 3}},
      {{"calloc_hook", "libasyncProfiler.so", "()L;", 3},
       {"operator new(unsigned long)", "libstdc++.so.6", "()L;", 3},
       {"JVM::allocate", "libjvm.so", "()L;", 4},
       {"deflateBytes", "java/util/zip/Deflater", "(JJ)I", 3},
       {"run", "java/lang/Thread", "()V", 0}},
      {{"malloc_hook", "libasyncProfiler.so", "()L;", 3}},
  };
  jfr::ConstantPools pools;
  std::vector<std::string> symbols;
  auto symbol = [&](const std::string& text) {
    for (size_t i = 0; i < symbols.size(); i++)
      if (symbols[i] == text) return i + 1;
    symbols.push_back(text);
    return symbols.size();
  };
  uint64_t method_key = 0;
  for (size_t s = 0; s < stacks.size(); s++) {
    jfr::ByteBuffer trace;  // added last: add_entry's buffers move when a new pool starts
    trace.put_varint(s + 1);
    trace.put_bool(false);
    trace.put_varint(stacks[s].size());
    for (const auto& f : stacks[s]) {
      method_key++;
      auto& method = pools.add_entry(kMethod);
      method.put_varint(method_key);
      method.put_varint(method_key);  // one class per method, same key
      method.put_varint(symbol(f.function));
      method.put_varint(symbol(f.descriptor));
      method.put_varint(0x100);
      method.put_bool(false);
      auto& klass = pools.add_entry(kClass);
      klass.put_varint(method_key);
      klass.put_varint(0);
      klass.put_varint(symbol(f.klass));
      klass.put_varint(0);
      klass.put_varint(0);
      trace.put_varint(method_key);
      trace.put_varint(0);  // line 0, as async-profiler writes for native frames
      trace.put_varint(0);
      trace.put_varint(f.type);
    }
    pools.add_entry(kStackTrace).put_bytes(trace.data(), trace.size());
  }
  for (size_t i = 0; i < symbols.size(); i++) {
    auto& e = pools.add_entry(kSymbol);
    e.put_varint(i + 1);
    e.put_string(symbols[i]);
  }
  const char* frame_types[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel", "C1 compiled"};
  for (uint64_t k = 0; k < 7; k++) {
    auto& e = pools.add_entry(kFrameType);
    e.put_varint(k);
    e.put_string(frame_types[k]);
  }
  auto& thread = pools.add_entry(kThread);
  thread.put_varint(1);
  thread.put_string("async-main");
  thread.put_varint(77);
  thread.put_null_string();
  thread.put_varint(0);

  for (uint64_t i = 0; i < 3; i++) {
    jfr::ByteBuffer f;
    f.put_varint(kStart + 10 * (i + 1));
    f.put_varint(1);
    f.put_varint(i + 1);
    f.put_varint(0x5000 + i);
    f.put_varint(1000 * (i + 1));
    testing::put_record(chunk, kMalloc, f);
  }
  jfr::ByteBuffer f;
  f.put_varint(kStart + 40);
  f.put_varint(1);
  f.put_varint(0);
  f.put_varint(0x5000);
  testing::put_record(chunk, kFree, f);

  uint64_t checkpoint = chunk.size();
  pools.encode_checkpoint(chunk, kStart + 50, 0);
  chunk.patch_be64(0, 0x464C520000020000ull);  // "FLR\0", version 2.0
  chunk.patch_be64(8, chunk.size());
  chunk.patch_be64(16, checkpoint);
  chunk.patch_be64(24, jfr::kChunkHeaderSize);
  chunk.patch_be64(32, kTestClock.start_nanos);
  chunk.patch_be64(40, 50);
  chunk.patch_be64(48, kStart);
  chunk.patch_be64(56, kTestClock.ticks_per_second);
  chunk.data()[67] = 1;  // flags: compressed integers
  return {chunk.data(), chunk.data() + chunk.size()};
}

TEST(ProfileFromAsyncProfiler, ReadsUnweightedSamplesAndDropsHookFrames) {
  std::vector<uint8_t> file = async_profiler_file();
  jfr::ChunkHeader header = jfr::parse_chunk_header(file);
  ASSERT_EQ(header.minor, 0);
  Profile p = build_profile(file);
  EXPECT_TRUE(p.warnings.empty()) << p.warnings[0];
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].pid, 0);
  EXPECT_FALSE(p.processes[0].weighted);
  EXPECT_FALSE(p.processes[0].counts_realloc_growth);  // not said: not nmprof's way of counting
  const auto& allocations = p.allocations();
  ASSERT_EQ(allocations.size(), 3u);
  for (size_t i = 0; i < 3; i++) {
    // Each sample counts once: its size, not an estimate.
    EXPECT_EQ(allocations[i].allocated.count, 1);
    EXPECT_EQ(allocations[i].allocated.bytes, 1000 * (i + 1));
    EXPECT_EQ(p.threads()[allocations[i].thread].name, "async-main");
  }
  EXPECT_EQ(functions(p, allocations[0].stack), (std::vector<std::string>{"my_alloc", "main"}));
  EXPECT_EQ(functions(p, allocations[1].stack),
            (std::vector<std::string>{"operator new(unsigned long)", "JVM::allocate", "deflateBytes", "run"}));
  EXPECT_EQ(functions(p, allocations[2].stack), std::vector<std::string>{"malloc_hook"}) << "kept: nothing else";

  const auto& frames = p.stacks()[allocations[1].stack].frames;
  EXPECT_EQ(p.frames()[frames[1]].kind, FrameKind::Cpp);
  EXPECT_EQ(p.frames()[frames[1]].line, -1);
  EXPECT_EQ(p.frames()[frames[2]].kind, FrameKind::JavaNative);
  EXPECT_EQ(p.frames()[frames[2]].container, "java.util.zip.Deflater");
  EXPECT_EQ(p.frames()[frames[3]].kind, FrameKind::Interpreted);
  EXPECT_EQ(p.frames()[frames[3]].container, "java.lang.Thread");
  EXPECT_EQ(p.frames()[p.stacks()[allocations[0].stack].frames[0]].kind, FrameKind::Native);
  // The free of 0x5000 took the first sample.
  EXPECT_EQ(p.matched_frees(), 1u);
  EXPECT_EQ(allocations[0].live.samples, 0u);
  EXPECT_EQ(allocations[1].live.samples, 1u);
}

}  // namespace
}  // namespace nmprof::profile
