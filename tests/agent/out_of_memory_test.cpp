// Out of memory (an address-space limit: ulimit -v), nothing half-made reaches the
// file: a buffer that cannot grow takes nothing more, a record is appended whole or
// not at all, appending to the file allocates nothing, and whichever of the
// recorder's allocations fails first, the recording ends after its last complete
// write and its last statistics say why. Failures are injected (failing_allocation.h)
// at every allocation of a recording in turn.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "agent/recording/recorder.h"
#include "agent/sampling/rate_limit.h"
#include "agent/threads/thread_state.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/writing/chunk_writer.h"
#include "formats/jfr/writing/event_record.h"
#include "profile/jfr_profile.h"
#include "tests/agent/failing_allocation.h"
#include "tests/agent/numbered_frames.h"

namespace nmprof {
namespace {

using testing::fail_allocations_from;
using testing::stop_failing_allocations;

std::string temp_path(const char* name) {
  return "/tmp/nmprof-" + std::string(name) + "-" + std::to_string(getpid()) + ".jfr";
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(OutOfMemory, ABufferThatFailedToGrowKeepsWhatItHeldAndTakesNothingMore) {
  jfr::ByteBuffer buffer;
  uint8_t bytes[4000] = {1};
  buffer.put_bytes(bytes, sizeof bytes);  // 4 KiB mapped
  fail_allocations_from(0);
  buffer.put_bytes(bytes, sizeof bytes);  // would grow
  buffer.put_u8(7);                       // fits in what is left: refused all the same
  buffer.put_varint(1);
  EXPECT_TRUE(stop_failing_allocations());
  EXPECT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.size(), sizeof bytes);
  buffer.clear();  // usable again, in the storage it kept
  buffer.put_u8(7);
  EXPECT_TRUE(buffer.ok());
  EXPECT_EQ(buffer.size(), 1u);
}

TEST(OutOfMemory, ARecordIsAppendedWholeOrNotAtAll) {
  jfr::ByteBuffer events;
  uint8_t filler[4090] = {};
  events.put_bytes(filler, sizeof filler);
  uint8_t body[40] = {5};
  fail_allocations_from(0);
  EXPECT_FALSE(jfr::append_record(events, body, sizeof body));
  EXPECT_TRUE(stop_failing_allocations());
  EXPECT_EQ(events.size(), sizeof filler);
}

TEST(OutOfMemory, AppendingToAChunkAllocatesNothing) {
  std::string path = temp_path("oom-chunk");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  jfr::ChunkWriter writer;
  ASSERT_TRUE(writer.begin(fd, jfr::schema::nmprof_metadata(), {1, 1, 1000000000}));
  jfr::ConstantPools pools({jfr::schema::kSymbol});
  for (int i = 0; i < 100; i++) {
    auto& entry = pools.add_entry(jfr::schema::kSymbol);
    entry.put_varint(static_cast<uint64_t>(i + 1));
    entry.put_string("symbol " + std::to_string(i));
  }
  jfr::ByteBuffer events;
  jfr::SmallRecord r(jfr::schema::kStatisticsEvent);
  for (int i = 0; i < 12; i++) r.varint(0);
  r.append_to(events);
  fail_allocations_from(0);
  bool appended = writer.append(pools, events, 2);
  EXPECT_FALSE(stop_failing_allocations());
  EXPECT_TRUE(appended);
  close(fd);
  profile::Profile p = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_TRUE(p.warnings.empty());
}

TEST(OutOfMemory, PoolsOrEventsThatFailedToGrowAreNotWritten) {
  std::string path = temp_path("oom-failed-buffer");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  jfr::ChunkWriter writer;
  ASSERT_TRUE(writer.begin(fd, jfr::schema::nmprof_metadata(), {1, 1, 1000000000}));
  uint64_t before = writer.file_end();
  jfr::ConstantPools pools;
  jfr::ByteBuffer events;
  uint8_t filler[4096] = {};
  fail_allocations_from(0);
  events.put_bytes(filler, sizeof filler);
  stop_failing_allocations();
  ASSERT_FALSE(events.ok());
  errno = 0;
  EXPECT_FALSE(writer.append(pools, events, 2));
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(writer.file_end(), before);
  EXPECT_TRUE(writer.ok());
  close(fd);
  std::remove(path.c_str());
}

// A recording of `samples` allocations with stacks of their own (new pool entries
// in every write), every other block freed, written every 10 samples.
void record(Recorder& recorder, int samples) {
  CallFrame frames[16];
  for (int i = 0; i < samples; i++) {
    CallStack stack{frames, 16};
    for (int depth = 0; depth < 16; depth++) stack.push(CallFrame{uint64_t(0x100000 + i * 16 + depth), 0, 0, false});
    uint64_t address = 0x7000000 + uint64_t(i) * 64;
    recorder.record_allocation(t_state, stack, address, 64, 1.0f);
    if (i % 2) recorder.record_free(t_state, address);
    if (i % 10 == 9) recorder.flush();
  }
}

struct Outcome {
  bool failed;  // an injected failure happened
  bool written;
  profile::Profile profile;
};

// Records `samples` with every allocation from the n-th on failing, counted from the
// start of the recording or from its first sample.
constexpr int kSamples = 60;

Outcome record_failing_from(int64_t n, bool before_start, int samples = kSamples) {
  std::string path = temp_path("oom-recording");
  std::remove(path.c_str());
  Settings settings = {{"nativemem", "0"}};
  Outcome outcome{};
  {
    NumberedFrames resolver;
    RateLimit rate;
    Recorder recorder(resolver, rate);
    if (before_start) fail_allocations_from(n);
    recorder.start(path, settings, 1000, false);
    if (!before_start) fail_allocations_from(n);
    record(recorder, samples);
    recorder.finish();
    outcome.failed = stop_failing_allocations();
  }
  outcome.written = exists(path);
  if (outcome.written) outcome.profile = profile::read_profile(path);
  std::remove(path.c_str());
  return outcome;
}

uint64_t samples_read(const profile::Profile& p) {
  uint64_t samples = 0;
  for (const auto& a : p.allocations()) samples += a.allocated.samples;
  return samples;
}

int64_t statistic(const profile::Profile& p, const char* name) {
  const profile::Statistic* s = p.processes.empty() ? nullptr : p.processes[0].statistic(name);
  return s ? s->value : -1;
}

// Each allocation in turn fails (and every later one; past the first 300, one in 7),
// until a recording makes no allocation past the last. Every file is whole: either
// the recording ended after its last complete write and says it ran out of memory,
// or it went on to the end having lost (and counted) the samples the sampled path
// could not record.
void expect_every_failure_leaves_a_readable_recording(bool before_start, int64_t* allocations) {
  int64_t failing = 0;
  for (;; failing += failing < 300 ? 1 : 7) {
    Outcome o = record_failing_from(failing, before_start);
    if (!o.failed) {
      ASSERT_TRUE(o.written);
      EXPECT_EQ(samples_read(o.profile), static_cast<uint64_t>(kSamples));
      EXPECT_EQ(statistic(o.profile, "stoppedGrowing"), jfr::schema::kGrowing);
      break;
    }
    if (!o.written) continue;  // nothing could be written: no file rather than a broken one
    const profile::Profile& p = o.profile;
    ASSERT_TRUE(p.warnings.empty()) << "allocation " << failing << ": " << p.warnings[0];
    ASSERT_EQ(p.processes.size(), 1u) << "allocation " << failing;
    int64_t stopped = statistic(p, "stoppedGrowing");
    if (stopped == jfr::schema::kGrowing)
      EXPECT_EQ(samples_read(p) + static_cast<uint64_t>(statistic(p, "lostSamples")), static_cast<uint64_t>(kSamples))
          << "allocation " << failing;
    else
      EXPECT_EQ(stopped, jfr::schema::kOutOfMemory) << "allocation " << failing;
  }
  *allocations = failing;
}
TEST(OutOfMemory, EveryAllocationThatFailsWhileRecordingLeavesAReadableRecording) {
  int64_t allocations = 0;
  expect_every_failure_leaves_a_readable_recording(false, &allocations);
  EXPECT_GT(allocations, 100);  // the sweep went through the recording's allocations
}

TEST(OutOfMemory, EveryAllocationThatFailsAtTheStartLeavesAReadableRecordingOrNone) {
  int64_t allocations = 0;
  expect_every_failure_leaves_a_readable_recording(true, &allocations);
  EXPECT_GT(allocations, 100);
}

TEST(OutOfMemory, ARecordingThatRanOutOfMemoryEndsAndRecordsNothingMore) {
  // Far enough in that some writes went through.
  Outcome o = record_failing_from(600, false, 400);
  ASSERT_TRUE(o.failed);
  ASSERT_TRUE(o.written);
  EXPECT_TRUE(o.profile.warnings.empty());
  EXPECT_GT(samples_read(o.profile), 0u);
  EXPECT_LT(samples_read(o.profile), 400u);
  EXPECT_EQ(statistic(o.profile, "stoppedGrowing"), jfr::schema::kOutOfMemory);
}

}  // namespace
}  // namespace nmprof
