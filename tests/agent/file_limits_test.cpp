// The recording stops growing at its limits (agent/writing/size_limit.h) and says so
// in its last statistics; the file stays a complete recording; a process whose file
// size limit (ulimit -f) it would pass is not killed by SIGXFSZ; and after a failed
// write the chunk writer cuts the file back and can still append.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "agent/recording/recorder.h"
#include "agent/sampling/rate_limit.h"
#include "agent/stacks/frame_resolver.h"
#include "tests/agent/numbered_frames.h"
#include "agent/threads/thread_state.h"
#include "formats/jfr/writing/chunk_writer.h"
#include "profile/jfr_profile.h"

namespace nmprof {
namespace {

std::string temp_path(const char* name) { return "/tmp/nmprof-" + std::string(name) + "-" + std::to_string(getpid()); }

uint64_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Records `samples` allocations, each with a stack of its own (so every flush writes
// new pool entries), flushing every 10.
void record(Recorder& recorder, int samples) {
  CallFrame frames[16];
  for (int i = 0; i < samples; i++) {
    CallStack stack{frames, 16};
    for (int depth = 0; depth < 16; depth++) stack.push(CallFrame{uint64_t(0x100000 + i * 16 + depth), 0, 0, false});
    recorder.record_allocation(t_state, stack, 0x7000000 + uint64_t(i) * 64, 64, 1.0f);
    if (i % 10 == 9) recorder.flush();
  }
}

// Samples read from the file (the profile keeps them summed by origin).
uint64_t samples_read(const profile::Profile& p) {
  uint64_t samples = 0;
  for (const auto& a : p.allocations()) samples += a.allocated.samples;
  return samples;
}

int64_t stopped_growing(const profile::Profile& p) {
  const profile::Statistic* s = p.processes.empty() ? nullptr : p.processes[0].statistic("stoppedGrowing");
  return s ? s->value : -1;
}

TEST(FileLimits, StopsGrowingAtMaxSizeAndSaysSo) {
  std::string path = temp_path("max-size") + ".jfr";
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  recorder.limit_file_size(128 * 1024);
  recorder.start(path, {{"nativemem", "0"}}, 0, true);
  record(recorder, 5000);  // several hundred kilobytes unlimited
  recorder.finish();

  uint64_t size = file_size(path);
  profile::Profile p = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_LE(size, 128u * 1024);
  EXPECT_GT(size, 64u * 1024);  // it grew until the limit, not less
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_GT(samples_read(p), 0u);
  EXPECT_LT(samples_read(p), 5000u);
  EXPECT_EQ(stopped_growing(p), jfr::schema::kMaxSizeReached);
}

TEST(FileLimits, AFileWithinItsLimitSaysItDidNotStop) {
  std::string path = temp_path("within") + ".jfr";
  NumberedFrames resolver;
  RateLimit rate;
  Recorder recorder(resolver, rate);
  recorder.limit_file_size(64 << 20);
  recorder.start(path, {{"nativemem", "0"}}, 0, true);
  record(recorder, 500);
  recorder.finish();
  profile::Profile p = profile::read_profile(path);
  std::remove(path.c_str());
  EXPECT_EQ(samples_read(p), 500u);
  EXPECT_EQ(stopped_growing(p), jfr::schema::kGrowing);
}

// In a child: SIGXFSZ's default action would kill it if the agent wrote past ulimit -f.
TEST(FileLimits, StopsBelowTheProcessFileSizeLimit) {
  std::string path = temp_path("ulimit") + ".jfr";
  pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit limit = {100 * 1024, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &limit);
    NumberedFrames resolver;
    RateLimit rate;
    Recorder recorder(resolver, rate);
    recorder.start(path, {{"nativemem", "0"}}, 0, true);
    record(recorder, 5000);
    recorder.finish();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  uint64_t size = file_size(path);
  profile::Profile p = profile::read_profile(path);
  std::remove(path.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_LE(size, 100u * 1024);
  EXPECT_GT(size, 50u * 1024);
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(stopped_growing(p), jfr::schema::kProcessFileLimit);
}

uint64_t big_endian(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

// A write cut short (here by ulimit -f with SIGXFSZ ignored, as a full disk would) is
// cut off again, and a smaller append still fits: the header then names the chunk's
// size and its last checkpoint that is really in the file.
TEST(FileLimits, ChunkWriterAppendsAgainAfterAFailedWrite) {
  std::string path = temp_path("cut-back");
  pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    jfr::ChunkWriter writer;
    if (fd < 0 || !writer.begin(fd, jfr::schema::nmprof_metadata(), {0, 0, 1000000000})) _exit(2);
    jfr::ConstantPools pools;
    jfr::ByteBuffer none;
    pools.add_entry(jfr::schema::kSymbol).put_varint(1);
    if (!writer.append(pools, none, 1)) _exit(3);
    struct rlimit limit = {writer.file_end() + 1000, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &limit);
    jfr::ByteBuffer big;
    for (int i = 0; i < 5000; i++) big.put_varint(0);
    if (writer.append(pools, big, 2) || errno != EFBIG) _exit(4);
    if (!writer.append(jfr::ConstantPools(), none, 3)) _exit(5);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  uint8_t header[jfr::kChunkHeaderSize];
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_EQ(pread(fd, header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
  uint8_t record[8] = {};
  uint64_t checkpoint = big_endian(header + 16);
  ASSERT_GT(pread(fd, record, sizeof record, static_cast<off_t>(checkpoint)), 0);
  close(fd);
  uint64_t size = file_size(path);
  std::remove(path.c_str());
  EXPECT_EQ(big_endian(header + 8), size);
  EXPECT_LT(checkpoint, size);
  size_t type_at = 0;
  while (record[type_at] & 0x80) type_at++;  // past the record's size (a varint)
  EXPECT_EQ(record[type_at + 1], 1);         // type 1: a checkpoint
}

}  // namespace
}  // namespace nmprof
