// Gives back the disk space of records a looping session has taken in from a
// recording that its agent still appends to, for weeks maybe: the run of records
// [begin, end) is covered by records of a type no metadata declares
// (schema::kDroppedRecords), which every reader (nmprof's, the JDK's jfr) skips by
// their size, and the whole blocks inside them are punched out of the file
// (fallocate). The file keeps its size and every other record where it was: the agent
// appends on, and the file stays a recording that reads as before, less those records.
#pragma once

#include <cstdint>

namespace nmprof::cli {

// 0, or -errno (EOPNOTSUPP: the file system cannot punch holes). A run without a
// whole block to give back is covered all the same: a file kept after a chunk that
// could not be written then holds nothing that the written chunks hold.
int punch_out_records(int fd, uint64_t begin, uint64_t end);

}  // namespace nmprof::cli
