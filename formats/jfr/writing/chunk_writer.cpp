#include "formats/jfr/writing/chunk_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/jfr/varint.h"

namespace nmprof::jfr {
namespace {

// How many bytes of `events` (whole records, each led by its size) fit in `room`.
size_t whole_records(const ByteBuffer& events, uint64_t room) {
  const uint8_t* begin = events.data();
  const uint8_t* end = begin + events.size();
  size_t length = 0;
  for (uint64_t size; length < events.size(); length += size) {
    if (decode_varint(begin + length, end, size) == 0 || size == 0 || size > room - length ||
        size > events.size() - length)
      break;
  }
  return length;
}

}  // namespace

bool ChunkWriter::begin(int fd, const ByteBuffer& metadata_record, const ChunkClock& clock) {
  fd_ = fd;
  clock_ = clock;
  off_t end = lseek(fd, 0, SEEK_END);
  if (end < 0) return ok_ = false;
  chunk_start_ = static_cast<uint64_t>(end);
  size_ = 0;
  committed_ = 0;
  last_checkpoint_ = 0;
  committed_checkpoint_ = 0;
  if (!fits(kChunkHeaderSize + metadata_record.size())) return ok_ = false;
  ok_ = true;

  uint8_t placeholder[kChunkHeaderSize] = {};  // patched below
  metadata_offset_ = kChunkHeaderSize;
  if (!write_all(placeholder, sizeof placeholder) || !metadata_record.ok() ||
      !write_all(metadata_record.data(), metadata_record.size()))
    return cut_back();
  return patch_header(clock.start_ticks) || cut_back();
}

bool ChunkWriter::begin(int fd, const Metadata& metadata, const ChunkClock& clock) {
  ByteBuffer record;
  metadata.encode(record, clock.start_ticks, metadata.fingerprint());
  return begin(fd, record, clock);
}

bool ChunkWriter::append(const ConstantPools& pools, const ByteBuffer& events, uint64_t now_ticks) {
  if (!ok_) return false;
  // Buffers that failed to grow hold less than was put in them: nothing of them is written.
  if (!pools.ok() || !events.ok()) {
    errno = ENOMEM;
    return false;
  }
  int64_t delta = last_checkpoint_ ? static_cast<int64_t>(last_checkpoint_) - static_cast<int64_t>(size_) : 0;
  uint64_t checkpoint = pools.empty() ? 0 : pools.write_checkpoint(now_ticks, delta, [](const void*, size_t) {
    return true;  // measured only
  });
  // Past the cap: the pools and the events that still fit, then EFBIG.
  size_t length = events.size();
  if (!fits(checkpoint + length)) {
    if (!fits(checkpoint)) return false;
    length = whole_records(events, cap_ - file_end() - checkpoint);
  }
  if (checkpoint) {
    uint64_t at = size_;
    if (!write_pieces(pools, now_ticks, delta)) return cut_back();
    last_checkpoint_ = at;
  }
  if (!write_all(events.data(), length)) return cut_back();
  if (!patch_header(now_ticks)) return cut_back();
  if (length == events.size()) return true;
  errno = EFBIG;
  return false;
}

// The checkpoint straight from the pools' entries: small pieces (the heads) are
// gathered on the stack (a signal handler's may be small) and go out with the next.
bool ChunkWriter::write_pieces(const ConstantPools& pools, uint64_t now_ticks, int64_t delta) {
  uint8_t gathered[512];
  size_t used = 0;
  auto flush = [&] {
    bool written = write_all(gathered, used);
    used = 0;
    return written;
  };
  bool written = pools.write_checkpoint(now_ticks, delta, [&](const void* p, size_t n) {
    if (n <= sizeof gathered - used) {
      memcpy(gathered + used, p, n);
      used += n;
      return true;
    }
    return flush() && write_all(p, n);
  });
  return written && flush();
}

bool ChunkWriter::resume(int fd) {
  fd_ = fd;
  if (ok_) return true;
  if (committed_ == 0 || ftruncate(fd, static_cast<off_t>(chunk_start_ + committed_)) != 0) return false;
  size_ = committed_;
  last_checkpoint_ = committed_checkpoint_;
  return ok_ = true;
}

bool ChunkWriter::fits(uint64_t bytes) const {
  if (chunk_start_ + size_ + bytes <= cap_) return true;
  errno = EFBIG;
  return false;
}

// Drops what the header does not cover (the whole chunk if it has no header yet),
// keeping errno for the caller's message. The chunk is then what its header says,
// and appends may go on.
bool ChunkWriter::cut_back() {
  int error = errno;
  if (ftruncate(fd_, static_cast<off_t>(chunk_start_ + committed_)) == 0 && committed_ > 0) {
    size_ = committed_;
    last_checkpoint_ = committed_checkpoint_;
  } else {
    ok_ = false;
  }
  errno = error;
  return false;
}

bool ChunkWriter::write_all(const void* p, size_t n) {
  auto* bytes = static_cast<const uint8_t*>(p);
  while (n > 0) {
    ssize_t w = pwrite(fd_, bytes, n, static_cast<off_t>(chunk_start_ + size_));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
  return true;
}

bool ChunkWriter::patch_header(uint64_t now_ticks) {
  uint64_t duration_ticks = now_ticks > clock_.start_ticks ? now_ticks - clock_.start_ticks : 0;
  uint64_t duration_nanos = static_cast<uint64_t>(
      static_cast<double>(duration_ticks) * 1e9 / static_cast<double>(clock_.ticks_per_second));
  uint8_t h[kChunkHeaderSize] = {'F', 'L', 'R', 0, 0, 2, 0, 1};  // magic, version 2.1
  auto put_be64 = [&h](size_t at, uint64_t v) {
    for (int i = 7; i >= 0; i--, v >>= 8) h[at + i] = static_cast<uint8_t>(v);
  };
  put_be64(8, size_);
  put_be64(16, last_checkpoint_);
  put_be64(24, metadata_offset_);
  put_be64(32, clock_.start_nanos);
  put_be64(40, duration_nanos);
  put_be64(48, clock_.start_ticks);
  put_be64(56, clock_.ticks_per_second);
  h[64] = 0;      // file state: finished
  h[67] = 1 | 2;  // flags: compressed integers | final chunk
  for (;;) {
    ssize_t w = pwrite(fd_, h, sizeof h, static_cast<off_t>(chunk_start_));
    if (w == static_cast<ssize_t>(sizeof h)) {
      committed_ = size_;
      committed_checkpoint_ = last_checkpoint_;
      return true;
    }
    if (w < 0 && errno == EINTR) continue;
    return ok_ = false;
  }
}

}  // namespace nmprof::jfr
