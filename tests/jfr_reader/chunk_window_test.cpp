// The windows of a looping recording (cli/chunks/chunk_window.h), cut from a chunk
// that grows as the agent's does, each read back as the report reads a chunk file;
// the disk space they give back (cli/chunks/punched_records.h); and the chunk files'
// names (cli/chunks/chunk_path.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <span>

#include "cli/chunks/chunk_path.h"
#include "cli/chunks/chunk_window.h"
#include "cli/chunks/punched_records.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/reading/chunk_header.h"
#include "formats/jfr/varint.h"
#include "profile/jfr_profile.h"
#include "tests/jfr_reader/test_recordings.h"

namespace nmprof {
namespace {

using cli::ChunkWindow;
using profile::Profile;
using testing::kTestClock;
using testing::NmprofChunk;

const int64_t kStart = kTestClock.start_ticks;
const int64_t kStartNanos = static_cast<int64_t>(kTestClock.start_nanos);

// Takes what the recording at `path` holds beyond what the window took.
void take_new(ChunkWindow& window, const std::string& path) {
  std::vector<uint8_t> bytes = testing::read_file(path);
  std::span<const uint8_t> all(bytes);
  uint64_t size = jfr::parse_chunk_header(all).size;
  window.take(all.first(jfr::kChunkHeaderSize), all.subspan(window.taken(), size - window.taken()));
}

// The window [from, to) (ns after the recording's start) as the report reads it.
Profile cut(ChunkWindow& window, int64_t from, int64_t to, bool last = false) {
  std::vector<uint8_t> out;
  window.cut(kStartNanos + from, kStartNanos + to, last ? INT64_MAX : kStartNanos + to, !last, SIZE_MAX, out);
  return profile::build_profile(out);
}

double allocated_bytes(const Profile& p) {
  double sum = 0;
  for (const auto& a : p.allocations()) sum += a.allocated.bytes;
  return sum;
}

double live_bytes(const Profile& p) {
  double sum = 0;
  for (const auto& a : p.allocations()) sum += a.live.bytes;
  return sum;
}

class ChunkWindows : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::temp_path("growing.jfr");
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    chunk_.emplace(fd_, 700);
    chunk_->process(1, "app");
    thread_ = chunk_->thread("main", 1);
    stack_ = chunk_->stack({{"f", "app"}});
  }
  void TearDown() override { close(fd_); }

  // The agent's next write, then what a window sees of it.
  void append(int64_t now) {
    chunk_->append(kStart + now);
    take_new(window_, path_);
  }
  void malloc(int64_t at, uint64_t address, uint64_t size) {
    chunk_->malloc(kStart + at, thread_, stack_, address, size, 1.0f);
  }

  std::string path_;
  int fd_ = -1;
  std::optional<NmprofChunk> chunk_;
  uint64_t thread_ = 0, stack_ = 0;
  ChunkWindow window_;
};

TEST_F(ChunkWindows, EachSampleIsAllocatedInOneWindowAndLiveInEveryWindowUntilItsFree) {
  malloc(10, 0xA000, 100);
  malloc(20, 0xB000, 200);
  chunk_->free(kStart + 30, thread_, 0xB000);
  append(40);
  Profile first = cut(window_, 0, 100);
  EXPECT_DOUBLE_EQ(allocated_bytes(first), 300);
  EXPECT_DOUBLE_EQ(live_bytes(first), 100);

  malloc(110, 0xC000, 50);
  chunk_->free(kStart + 115, thread_, 0xA000, 0xA800, 400, 1.0f);  // a realloc moved it
  malloc(90, 0xD000, 70);  // made in the first window, written in the second
  malloc(250, 0xE000, 30);  // after the second window's end
  append(260);
  Profile second = cut(window_, 100, 200);
  EXPECT_DOUBLE_EQ(allocated_bytes(second), 50 + 70);  // not A again, not E yet
  EXPECT_DOUBLE_EQ(live_bytes(second), 400 + 50 + 70);  // A moved, with its new size
  EXPECT_EQ(second.unmatched_frees(), 0u);
  EXPECT_EQ(second.frees_of_earlier_chunks(), 1u);  // A's move: the block is the first window's
  // It says that its process ran on (the report does not warn that its recording ended early).
  ASSERT_EQ(second.processes.size(), 1u);
  EXPECT_EQ(*second.processes[0].setting(jfr::schema::kChunkSetting), jfr::schema::kChunkRunsOn);

  chunk_->free(kStart + 270, thread_, 0xC000);
  append(280);
  Profile last = cut(window_, 200, 300, true);
  EXPECT_DOUBLE_EQ(allocated_bytes(last), 30);
  EXPECT_DOUBLE_EQ(live_bytes(last), 400 + 70 + 30);  // A and D, however old, and E
  EXPECT_EQ(last.unmatched_frees(), 0u);
  EXPECT_EQ(*last.processes[0].setting(jfr::schema::kChunkSetting), jfr::schema::kChunkEnded);
  // A keeps its own time (its last move), not the window's start.
  std::vector<profile::LiveSample> live = last.live_samples();
  ASSERT_EQ(live.size(), 3u);
  EXPECT_EQ(live[0].time_nanos, kStartNanos + 90);
  EXPECT_EQ(live[1].time_nanos, kStartNanos + 115);
}

// What the report makes of windows read one after another (report chunk-*.jfr).
class ChunkFiles : public ChunkWindows {
 protected:
  // Three windows: A moved in the second and live to the end, B (of the first) freed
  // in the second, C (of the second) freed in the third, D live at the end.
  void SetUp() override {
    ChunkWindows::SetUp();
    malloc(10, 0xA000, 100);
    malloc(20, 0xB000, 200);
    append(40);
    windows_.push_back(cut_bytes(0, 100));
    chunk_->free(kStart + 110, thread_, 0xB000);
    chunk_->free(kStart + 115, thread_, 0xA000, 0xA800, 400, 1.0f);
    malloc(120, 0xC000, 50);
    append(130);
    windows_.push_back(cut_bytes(100, 200));
    chunk_->free(kStart + 220, thread_, 0xC000);
    malloc(230, 0xD000, 70);
    append(240);
    windows_.push_back(cut_bytes(200, 300, true));
  }
  std::vector<uint8_t> cut_bytes(int64_t from, int64_t to, bool last = false) {
    std::vector<uint8_t> out;
    window_.cut(kStartNanos + from, kStartNanos + to, last ? INT64_MAX : kStartNanos + to, !last, SIZE_MAX, out);
    return out;
  }
  Profile read(std::initializer_list<size_t> which, profile::SampleSelector* selector = nullptr) {
    profile::ProfileReader reader(selector);
    for (size_t i : which) reader.read(windows_[i]);
    return reader.finish();
  }
  std::vector<std::vector<uint8_t>> windows_;
};

TEST_F(ChunkFiles, TheWindowsReadOneAfterAnotherAreTheWholeRecording) {
  Profile whole = profile::read_profile(path_);
  Profile merged = read({0, 1, 2});
  EXPECT_DOUBLE_EQ(allocated_bytes(merged), 100 + 200 + 50 + 70);
  EXPECT_DOUBLE_EQ(allocated_bytes(merged), allocated_bytes(whole));
  EXPECT_DOUBLE_EQ(live_bytes(merged), 400 + 70);  // A where it moved, and D: not restated twice
  EXPECT_DOUBLE_EQ(live_bytes(merged), live_bytes(whole));
  EXPECT_EQ(merged.matched_frees(), whole.matched_frees());
  EXPECT_EQ(merged.unmatched_frees(), 0u);
  EXPECT_EQ(merged.frees_of_earlier_chunks(), 0u);  // each one found its block
  auto peak = merged.time_series().live_peak(), whole_peak = whole.time_series().live_peak();
  ASSERT_TRUE(peak && whole_peak);
  EXPECT_DOUBLE_EQ(peak->live_bytes, whole_peak->live_bytes);
  EXPECT_EQ(peak->time_nanos, whole_peak->time_nanos);
  std::vector<profile::LiveSample> live = merged.live_samples();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].time_nanos, kStartNanos + 115);  // A, since its move
}

// What a report's --to keeps: the samples and frees made up to a moment.
class Until : public profile::SampleSelector {
 public:
  explicit Until(int64_t nanos) : nanos_(nanos) {}
  bool keeps(const Profile&, const profile::Sample& sample) override { return sample.time_nanos <= nanos_; }
  bool keeps_free(const Profile&, uint32_t, int64_t time_nanos) override { return time_nanos <= nanos_; }

 private:
  int64_t nanos_;
};

TEST_F(ChunkFiles, ReadUpToAMomentTheyHaveTheLiveSetOfThatMoment) {
  // At 150: A where it moved (400) and C (50), which the third window frees later
  // (--to, and --peak's reading up to the peak: that free is turned away, which is no
  // sign of a free in a window not read).
  Until until(kStartNanos + 150);
  Profile merged = read({0, 1, 2}, &until);
  Until again(kStartNanos + 150);
  Profile whole = profile::read_profile(path_, {}, &again);
  EXPECT_DOUBLE_EQ(live_bytes(merged), 400 + 50);
  EXPECT_DOUBLE_EQ(live_bytes(merged), live_bytes(whole));
}

TEST_F(ChunkFiles, AMissingWindowLosesItsOwnSamplesOnly) {
  Profile merged = read({0, 2});
  EXPECT_DOUBLE_EQ(allocated_bytes(merged), 100 + 200 + 70);  // not C, the missing window's
  // B was freed in the missing window (the third neither restates nor frees it); A
  // moved there, and the third restates it where it went.
  EXPECT_DOUBLE_EQ(live_bytes(merged), 400 + 70);
  EXPECT_EQ(merged.frees_of_earlier_chunks(), 1u);  // C's
}

TEST_F(ChunkFiles, FilesThatCoverTheSameTimeAreSaidToCountItTwice) {
  EXPECT_TRUE(read({0, 1, 2}).warnings.empty());
  Profile twice = read({0, 1, 1});
  ASSERT_EQ(twice.warnings.size(), 1u);
  EXPECT_EQ(twice.warnings[0], "it covers a time that an earlier file covers too, for process 700: what both hold "
                               "is counted twice");
}

TEST_F(ChunkWindows, AFreeWrittenBeforeItsSampleIsPairedWhenTheSampleComes) {
  chunk_->free(kStart + 50, thread_, 0xF000);  // another stripe's sample is written later
  append(60);
  Profile first = cut(window_, 0, 100);
  EXPECT_DOUBLE_EQ(allocated_bytes(first), 0);
  EXPECT_EQ(first.unmatched_frees(), 0u);

  malloc(40, 0xF000, 500);
  append(120);
  Profile second = cut(window_, 100, 200, true);
  EXPECT_DOUBLE_EQ(allocated_bytes(second), 500);
  EXPECT_DOUBLE_EQ(live_bytes(second), 0);
  EXPECT_EQ(second.matched_frees(), 1u);
}

// The type of the record at `offset` of the recording at `path`.
uint64_t record_type(const std::string& path, size_t offset) {
  std::vector<uint8_t> bytes = testing::read_file(path);
  uint64_t size = 0, type = 0;
  size_t n = jfr::decode_varint(bytes.data() + offset, bytes.data() + bytes.size(), size);
  jfr::decode_varint(bytes.data() + offset + n, bytes.data() + bytes.size(), type);
  return type;
}

TEST_F(ChunkWindows, LetsGoOfTheSamplesAndFreesOfWrittenWindowsOnly) {
  EXPECT_TRUE(window_.let_go().empty());  // nothing taken yet
  malloc(10, 0xA000, 100);
  chunk_->free(kStart + 30, thread_, 0xA000);
  malloc(150, 0xB000, 200);  // the second window's
  append(160);
  size_t second_window_sample = window_.taken();
  malloc(170, 0xC000, 300);
  chunk_->stack({{"g", "app"}});  // a new stack: a checkpoint ends the run
  append(180);
  cut(window_, 0, 100);
  std::vector<ChunkWindow::ByteRange> first = window_.let_go();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(record_type(path_, first[0].begin), jfr::schema::kMallocEvent);
  EXPECT_LT(first[0].end, second_window_sample);  // not B, which no window has taken yet
  EXPECT_TRUE(window_.let_go().empty());  // once

  cut(window_, 100, 200, true);
  std::vector<ChunkWindow::ByteRange> second = window_.let_go();
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(second[0].begin, first[0].end);
  for (ChunkWindow::ByteRange range : second) {
    uint64_t type = record_type(path_, range.begin);
    EXPECT_TRUE(type == jfr::schema::kMallocEvent || type == jfr::schema::kFreeEvent ||
                type == jfr::schema::kStatisticsEvent) << type;
  }
}

TEST_F(ChunkWindows, TheRecordingGivesBackTheSpaceOfWhatWasLetGoAndStillReads) {
  // Enough samples for whole blocks: each is some 30 bytes.
  for (int i = 0; i < 4000; i++) malloc(10 + i / 100, 0x10000 + 16 * i, 10);
  append(40);
  malloc(250, 0xF000, 77);  // after the window: it stays
  append(260);
  struct stat before;
  ASSERT_EQ(fstat(fd_, &before), 0);
  cut(window_, 0, 100);
  uint64_t let_go = 0;
  for (ChunkWindow::ByteRange range : window_.let_go()) {
    int error = cli::punch_out_records(fd_, range.begin, range.end);
    if (error == -EOPNOTSUPP) GTEST_SKIP() << "this file system cannot punch holes";
    ASSERT_EQ(error, 0) << strerror(-error);
    let_go += range.end - range.begin;
  }
  struct stat after;
  ASSERT_EQ(fstat(fd_, &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_GT(let_go, 100'000u);
  EXPECT_LT(after.st_blocks * 512, before.st_blocks * 512 - static_cast<blkcnt_t>(let_go) + 2 * after.st_blksize);

  // The agent appends on; the windows and the recording itself read as before, less
  // what was let go.
  malloc(270, 0xE000, 33);
  append(280);
  Profile last = cut(window_, 100, 300, true);
  EXPECT_DOUBLE_EQ(allocated_bytes(last), 77 + 33);
  EXPECT_DOUBLE_EQ(live_bytes(last), 4000 * 10 + 77 + 33);
  Profile file = profile::read_profile(path_);
  EXPECT_TRUE(file.warnings.empty()) << file.warnings[0];
  EXPECT_DOUBLE_EQ(allocated_bytes(file), 77 + 33);
}

TEST_F(ChunkWindows, ARunWithoutAWholeBlockToGiveBackIsCoveredAllTheSame) {
  // A file kept after a chunk that could not be written holds nothing the written
  // chunks hold.
  malloc(10, 0xA000, 100);
  chunk_->free(kStart + 20, thread_, 0xA000);
  append(30);
  cut(window_, 0, 100);
  std::vector<ChunkWindow::ByteRange> runs = window_.let_go();
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_LT(runs[0].end - runs[0].begin, 4096u);
  ASSERT_EQ(cli::punch_out_records(fd_, runs[0].begin, runs[0].end), 0);
  Profile file = profile::read_profile(path_);
  EXPECT_TRUE(file.warnings.empty()) << file.warnings[0];
  EXPECT_DOUBLE_EQ(allocated_bytes(file), 0);
  EXPECT_EQ(file.matched_frees() + file.unmatched_frees(), 0u);
  EXPECT_EQ(file.processes.size(), 1u);  // the descriptions stay
}

TEST_F(ChunkWindows, AChunkWithinItsRoomLeavesOutTheWindowsLaterRecordsAndSaysSo) {
  malloc(10, 0xA000, 100);  // the first window's, live to the end
  chunk_->statistics(kStart + 20, {{"samples", 1}});
  append(30);
  cut(window_, 0, 100);

  for (int i = 0; i < 200; i++) malloc(110 + i / 4, 0x10000 + 16 * i, 10);  // 50 ns of samples from 110
  chunk_->free(kStart + 111, thread_, 0x10000);  // early: in the chunk
  chunk_->free(kStart + 158, thread_, 0x10010);  // late: left out, the block live in it
  chunk_->statistics(kStart + 170, {{"samples", 201}});
  append(180);
  std::vector<uint8_t> whole;
  ChunkWindow copy = window_;
  copy.cut(kStartNanos + 100, kStartNanos + 200, kStartNanos + 200, true, SIZE_MAX, whole);
  size_t room = whole.size() * 2 / 3;
  std::vector<uint8_t> out;
  window_.cut(kStartNanos + 100, kStartNanos + 200, kStartNanos + 200, true, room, out);
  EXPECT_LE(out.size(), room);
  Profile capped = profile::build_profile(out);
  const profile::Statistic* stopped = capped.processes.at(0).statistic("stoppedGrowing");
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->value, jfr::schema::kMaxSizeReached);
  EXPECT_EQ(capped.processes.at(0).statistic("samples")->value, 201);  // the rest as the agent wrote them
  // The samples up to a time, every one of them; A restated.
  std::vector<profile::LiveSample> live = capped.live_samples();
  int64_t last_kept = 0;
  for (const auto& sample : live) last_kept = std::max(last_kept, sample.time_nanos - kStartNanos);
  double allocated = allocated_bytes(capped);
  EXPECT_GT(allocated, 0);
  EXPECT_LT(allocated, 2000);
  EXPECT_DOUBLE_EQ(allocated, 10.0 * 4 * (last_kept - 110 + 1));  // four samples each ns, none missing
  EXPECT_DOUBLE_EQ(live_bytes(capped), 100 + allocated - 10);  // the early free only
  EXPECT_EQ(capped.matched_frees(), 1u);

  // The next window is whole: the blocks left out are restated live, the late free
  // took its block away.
  append(250);
  Profile next = cut(window_, 200, 300, true);
  EXPECT_DOUBLE_EQ(live_bytes(next), 100 + 2000 - 20);
  EXPECT_DOUBLE_EQ(allocated_bytes(next), 0);
}

TEST(ChunkPath, ExpandsTheNumberBesideThePidTheTimeAndPercent) {
  EXPECT_EQ(cli::chunk_path("d/%n-%p-%t-%%n.jfr", 3, 42, "20261207-043000"), "d/3-42-20261207-043000-%n.jfr");
  EXPECT_EQ(cli::chunk_path("a%", 0, 1, "T"), "a%");
}

TEST(ChunkPath, AnOutputNamesEachChunkWithANumberOrATime) {
  EXPECT_TRUE(cli::names_each_chunk("app-%n.jfr"));
  EXPECT_TRUE(cli::names_each_chunk("app-%t.pb.gz"));
  EXPECT_FALSE(cli::names_each_chunk("app.jfr"));
  EXPECT_FALSE(cli::names_each_chunk("app-%p.jfr"));
  EXPECT_FALSE(cli::names_each_chunk("app-%%n.jfr"));
  EXPECT_FALSE(cli::names_each_chunk("app-%"));
}

}  // namespace
}  // namespace nmprof
