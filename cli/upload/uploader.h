// Sends finished profiles ("chunks": the whole run of `nmprof run`, what `attach`
// collected, or one period of a looping recording) to Pyroscope and to an OTLP
// collector, from nmprof's own process: the program being profiled never waits for
// an upload. Each destination has its queue and thread (delivery_queue.h). A chunk
// that cannot be sent stays on disk, and one warning line names it.
//
//   auto uploader = Uploader::create(*settings, quiet, &error);  // loads libcurl
//   uploader->submit({recording, output, from, until, pid, program});
//   ...
//   uploader->finish(interrupted);  // at most settings.timeout; Ctrl-C cuts it short
//
// submit() is prepare() and send(): a caller whose recording is removed when the file
// it keeps is written (`run -o app.pb.gz`) prepares before, and sends after, so that
// nothing is sent before the file is on disk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/upload/delivery_queue.h"
#include "cli/upload/upload_settings.h"

namespace nmprof::upload {

struct Chunk {
  std::string recording;   // its JFR recording, complete
  std::string file;        // the file that stays on disk for the user (named in messages)
  int64_t from_nanos = 0;  // since the epoch; 0: the recording's own span
  int64_t until_nanos = 0;
  int64_t pid = 0;      // 0: the recording's first process
  std::string program;  // what --app defaults to; empty: the recording's first executable
};

// The requests of one chunk, one per destination (none where it could not be made).
struct ChunkRequests {
  std::vector<std::optional<Delivery>> deliveries;
  std::string recording;  // the chunk's
};

class Uploader {
 public:
  // nullptr with a one-line *error when libcurl cannot be loaded.
  static std::unique_ptr<Uploader> create(UploadSettings settings, bool quiet, std::string* error);
  ~Uploader();

  // Makes the chunk's requests from its recording, which may be removed once this
  // returns. A chunk that cannot be read is named in a warning.
  ChunkRequests prepare(const Chunk& chunk);
  // Queues them, and sending begins: the chunk's file should be on disk by then, else
  // (`written` false: it could not be converted) messages name its recording, which
  // stays instead. A chunk that a full queue cannot take is named in a warning.
  void send(ChunkRequests requests, bool written);
  void submit(const Chunk& chunk) { send(prepare(chunk), true); }
  // run --loop --keep N: chunk files are removed past the newest N, those not sent too
  // (the lines that name them say so).
  void keep_newest_chunks(unsigned keep) { kept_chunks_ = keep; }
  // Waits at most the settings' timeout for what is queued to be taken, or until
  // `interrupted()` (polled; the caller's signal handling says whether a signal asked
  // nmprof to end), names what was not, and says where the rest went unless quiet.
  // Returns whether every chunk was delivered everywhere.
  bool finish(const std::function<bool()>& interrupted);

  // A queue's bound: past it, a new chunk is not queued (and stays on disk).
  static constexpr size_t kMaxQueuedBytes = 64 << 20;

 private:
  struct Destination;
  Uploader(UploadSettings settings, bool quiet);
  void queue(Destination& destination, Delivery delivery);
  // On a queue's thread: what an attempt came to, as a line for the user.
  void settled(Destination& destination, const Settled& settled);

  // Lines of the queues' threads, printed by the caller's (say_noted): never in the
  // middle of a line of the summary.
  void note(const std::string& line);
  void say_noted();

  UploadSettings settings_;
  bool quiet_;
  std::mutex noted_mutex_;
  std::vector<std::string> noted_;
  bool all_delivered_ = true;
  unsigned kept_chunks_ = 0;  // 0: every chunk stays
  // How a line ends that names a chunk not sent: where it is.
  std::string stays_on_disk() const;
  std::vector<std::unique_ptr<Destination>> destinations_;  // Pyroscope, OTLP
};

// For `run` and `attach`: the uploader `options` ask for, or nullptr when they ask
// for none. When they are wrong or libcurl cannot be loaded, says why in one line and
// sets *failed to nmprof's exit status (nullptr too).
std::unique_ptr<Uploader> start_uploads(const cli::UploadOptions& options, const std::vector<std::string>& tags,
                                        bool quiet, int* failed);

}  // namespace nmprof::upload
