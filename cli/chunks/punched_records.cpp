#include "cli/chunks/punched_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/varint.h"

namespace nmprof::cli {
namespace {

constexpr size_t kSizeLength = 5;  // the covering record's size, padded
constexpr size_t kHeadLength = kSizeLength + 1;  // and its type, one byte
// The JDK reads a record's size as an int: longer runs take several records.
constexpr uint64_t kLongestRecord = uint64_t{1} << 30;

// Covers [at, at + length) with one dropped record, then punches its whole blocks.
int punch_one(int fd, uint64_t at, uint64_t length, uint64_t block) {
  uint8_t head[kHeadLength];
  jfr::encode_varint_padded(length, head, kSizeLength);
  head[kSizeLength] = jfr::schema::kDroppedRecords;
  // The head first: should the punch fail, the records are covered, not lost (the
  // windows written hold them), and the file still reads.
  for (size_t done = 0; done < kHeadLength;) {
    ssize_t n = pwrite(fd, head + done, kHeadLength - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? -errno : -EIO;
    done += static_cast<size_t>(n);
  }
  uint64_t first = (at + kHeadLength + block - 1) / block * block;
  uint64_t last = (at + length) / block * block;
  if (first < last && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first),
                              static_cast<off_t>(last - first)) != 0)
    return -errno;
  return 0;
}

}  // namespace

int punch_out_records(int fd, uint64_t begin, uint64_t end) {
  struct stat file;
  if (fstat(fd, &file) != 0) return -errno;
  uint64_t block = file.st_blksize > 0 ? static_cast<uint64_t>(file.st_blksize) : 4096;
  for (uint64_t at = begin; end - at > kHeadLength;) {
    uint64_t length = std::min(end - at, kLongestRecord);
    if (end - at - length < kHeadLength) length = end - at;  // no sliver left after it
    if (int error = punch_one(fd, at, length, block)) return error;
    at += length;
  }
  return 0;
}

}  // namespace nmprof::cli
