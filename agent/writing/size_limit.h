// Where a recording stops growing: at the size the user allowed (--max-size), below
// the process's file size limit (ulimit -f: a write past it would kill the host with
// SIGXFSZ), and before the disk's free space runs out (leaving the host 1% of the
// disk, at most 64 MiB, so that its own writes still succeed). Each limit keeps a
// little room for the last append, whose statistics say that and why the file
// stopped growing.
#pragma once

#include <cstdint>

#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

using FileLimit = jfr::schema::StopReason;

class SizeLimit {
 public:
  static constexpr uint64_t kLastAppendRoom = 4096;

  // 0: the user set no size.
  void set_max_bytes(uint64_t max_bytes) { max_bytes_ = max_bytes; }
  uint64_t max_bytes() const { return max_bytes_; }

  struct Cap {
    uint64_t end;  // the file offset the next append must not pass
    FileLimit by;  // the limit that sets it (kGrowing: none)
  };
  // For the file open as fd, now ending at file_end; `last`: the append saying the
  // file stopped, which may use the room kept for it.
  Cap cap(int fd, uint64_t file_end, bool last) const;

 private:
  uint64_t max_bytes_ = 0;
};

}  // namespace nmprof
