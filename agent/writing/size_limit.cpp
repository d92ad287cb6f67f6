#include "agent/writing/size_limit.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>

namespace nmprof {
namespace {

constexpr uint64_t kMaxHostMargin = 64ull << 20;

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

SizeLimit::Cap SizeLimit::cap(int fd, uint64_t file_end, bool last) const {
  uint64_t room = last ? 0 : kLastAppendRoom;
  Cap cap{UINT64_MAX, jfr::schema::kGrowing};
  auto lower = [&cap](uint64_t end, FileLimit by) {
    if (end < cap.end) cap = {end, by};
  };
  if (max_bytes_) lower(minus(max_bytes_, room), jfr::schema::kMaxSizeReached);
  struct rlimit file_size;
  if (getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY)
    lower(minus(file_size.rlim_cur, room), jfr::schema::kProcessFileLimit);
  // f_bavail: what unprivileged writers may use (root's reserve is left alone).
  struct statvfs disk;
  if (fstatvfs(fd, &disk) == 0 && disk.f_blocks > 0) {
    uint64_t block = disk.f_frsize ? disk.f_frsize : disk.f_bsize;
    uint64_t margin = std::min<uint64_t>(disk.f_blocks * block / 100, kMaxHostMargin);
    lower(file_end + minus(disk.f_bavail * block, margin + room), jfr::schema::kDiskNearlyFull);
  }
  return cap;
}

}  // namespace nmprof
