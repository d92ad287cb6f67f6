// Cuts one growing JFR chunk (what one process image records under `run`: a chunk
// that the agent appends to while the process runs) into windows, each a complete,
// self-contained chunk of its own (--loop). A window's chunk holds the recording's
// metadata, every constant pool written so far (pool entries are written once, and a
// later window's samples refer to earlier entries), the process's description
// events, its latest statistics, and of the samples and frees:
//
// - every profiler.Malloc that appeared in the recording since the previous window,
//   with the frees and realloc moves of those blocks that also appeared by now: what
//   was allocated in the window;
// - the frees and realloc moves made in the window of blocks of earlier windows: a
//   report that reads the windows one after another (report chunk-*.jfr) follows
//   every block to its end;
// - for every sampled block of an earlier window still live now, one
//   profiler.LiveMalloc: its profiler.Malloc (its stack and thread) with the address,
//   size, live weight and time of its last realloc move, if any: the live view, not
//   allocated.
//
// A window takes the samples and frees made before its end (their times), among
// those the agent has written by the time it is cut: a sample written late (the
// agent writes at most a second after it, a single-threaded program when it next
// samples) goes to the first window cut after it appeared, so that each sample is in
// exactly one window and nothing is lost or counted twice at a boundary. Blocks are
// followed by address, in time order, as the report's live tracker follows them.
//
// What the windows need of the source is kept in memory, so the source's samples,
// frees and statistics can go from the file once every window that holds them is
// written (let_go(); punched_records.h): a recording that runs for weeks stays small
// on disk.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof::cli {

class ChunkWindow {
 public:
  // Where the records not taken yet begin in the source chunk (an offset from its start).
  size_t taken() const { return taken_; }
  // Takes the source chunk's `header` as it is now and the `records` that follow
  // taken(): whole records, up to where the header says the chunk ends now (a chunk
  // the agent appends to only grows). Throws jfr::FormatError for bytes that are
  // not records.
  void take(std::span<const uint8_t> header, std::span<const uint8_t> records);
  // Whether the next window has something of its own: a record taken since the last
  // cut, or a sample that came after it.
  bool grew() const { return grew_; }
  // Appends to `out` the window's chunk, covering [start_nanos, end_nanos) (wall
  // clock): the samples and frees taken that were made before `until_nanos` (the
  // window's end; the last window takes them all). Nothing when no header was taken
  // yet. `runs_on`: the process image runs past the window's end, which the chunk says
  // (schema::kChunkSetting): its recording not ending with it is then no loss.
  // `room`: the bytes the chunk may take (--max-size). It always holds the metadata,
  // pools, descriptions and live set; the window's samples, moves and frees then go in
  // time order while they fit, those from the time they no longer do left out, which
  // its statistics say (stoppedGrowing: --max-size). The blocks are followed all the
  // same: the next window is whole.
  void cut(int64_t start_nanos, int64_t end_nanos, int64_t until_nanos, bool runs_on, size_t room,
           std::vector<uint8_t>& out);
  // When the source chunk was begun, as its header says; INT64_MIN before a header
  // was taken.
  int64_t started_nanos() const;
  // When the source chunk was last written to, as its header says (its writer patches
  // the duration at every append); INT64_MAX before a header was taken.
  int64_t written_until_nanos() const;

  struct ByteRange {  // offsets from the source chunk's start
    size_t begin, end;
  };
  // Runs of the source's samples, frees and statistics that the windows cut so far
  // took in (a later window's share, and a free not paired yet, are not): what the
  // source may let go of once those windows are written. Each byte once, in order.
  std::vector<ByteRange> let_go();

 private:
  using Record = std::vector<uint8_t>;
  struct Sampled {  // a profiler.Malloc or profiler.Free, in the order of their times
    int64_t ticks;
    uint64_t address;
    uint64_t new_address;  // a Free's realloc move; 0: a free
    bool malloc;
    bool retried;  // unpaired at a cut before
    size_t offset;  // in the source chunk
    Record record;
  };
  // A sampled block: its profiler.Malloc (of an earlier window: its
  // profiler.LiveMalloc as of the last cut), then its realloc moves since.
  struct Block {
    Record allocation;
    std::vector<Record> moves;
    bool carried = false;  // allocated in an earlier window
  };

  void follow(Sampled event);
  // The time from which the window's own records (ended_, and the moves and new
  // allocations of live_) no longer fit in `room` bytes; INT64_MAX when all fit.
  int64_t first_left_out(size_t room) const;
  // A block leaves the live set: what this window made of it (its sample, unless an
  // earlier window had it, its moves, its free) goes in the window's chunk.
  void end(Block block, Record free);

  std::vector<uint8_t> header_;         // the source chunk's, once taken
  Record metadata_;
  std::vector<Record> checkpoints_;     // in file order
  std::vector<Record> descriptions_;    // nmprof.Process, settings, tags, modules
  Record statistics_;                   // the latest nmprof.Statistics
  size_t taken_ = jfr::kChunkHeaderSize;  // records follow the header
  bool grew_ = false;
  std::vector<Sampled> arrived_;        // samples and frees not in a window yet
  std::unordered_map<uint64_t, Block> live_;  // by the block's address now
  std::vector<Record> ended_;           // records of blocks freed in this window
  // Frees whose block had not appeared yet (another stripe's sample, written in a
  // later append), tried again at the next cut.
  std::vector<Sampled> unpaired_;
  std::vector<ByteRange> droppable_;  // samples', frees' and statistics' runs not let go yet
};

}  // namespace nmprof::cli
