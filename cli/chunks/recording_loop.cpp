#include "cli/chunks/recording_loop.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/exit_codes.h"
#include "cli/chunks/chunk_path.h"
#include "cli/output/output_writer.h"
#include "cli/report/report_command.h"
#include "formats/text/utf8.h"
#include "protocol/agent_options.h"

namespace nmprof::cli {

int64_t wall_clock_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

void print_warnings(std::vector<std::string>& warnings) {
  for (const auto& warning : warnings) std::cerr << "nmprof: warning: " << text::escape_controls(warning) << "\n";
  warnings.clear();
}

}  // namespace

RecordingLoop::RecordingLoop(LoopSettings settings, RecordingFiles& files, int64_t started_nanos,
                             upload::Uploader* uploader)
    : settings_(std::move(settings)),
      windows_(files),
      uploader_(uploader),
      period_nanos_(static_cast<int64_t>(settings_.period_seconds * 1e9)),
      window_start_(started_nanos),
      next_boundary_(started_nanos + period_nanos_) {}

RecordingLoop::~RecordingLoop() { pause(); }

void RecordingLoop::pause() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RecordingLoop::start() {
  // The thread takes none of the signals nmprof forwards to its command.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void RecordingLoop::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // A window is cut once the agent has written what was sampled before its end (it
    // writes each second); waited for on the wall clock the windows are told in, a
    // second at most at a time.
    int64_t ahead = next_boundary_ + kWriteDelayNanos - wall_clock_nanos();
    if (ahead > 0) {
      wake_.wait_for(lock, std::chrono::nanoseconds(std::min<int64_t>(ahead, 1'000'000'000)));
      if (stopping_) return;
      continue;
    }
    lock.unlock();
    write_chunk(next_boundary_, false);
    next_boundary_ += period_nanos_;
    lock.lock();
    if (stopping_) return;
  }
}

int RecordingLoop::finish(int64_t ended_nanos) {
  pause();
  // Everything is written now: the windows that ended meanwhile, then the last.
  for (; next_boundary_ < ended_nanos; next_boundary_ += period_nanos_) write_chunk(next_boundary_, false);
  int status = write_chunk(std::max(ended_nanos, window_start_), true);
  if (number_ == 0) {
    std::cerr << "nmprof: no chunk was written: the agent wrote nothing readable\n";
    return kExitFailure;
  }
  return failed_ ? kExitFailure : status;
}

int RecordingLoop::write_chunk(int64_t end_nanos, bool last) {
  std::vector<std::string> warnings;
  std::vector<uint8_t> bytes = windows_.cut(window_start_, end_nanos, last, settings_.most_bytes, &warnings);
  print_warnings(warnings);
  if (bytes.empty()) return 0;  // nothing recorded yet: the window goes on

  std::string output = chunk_path(settings_.output, number_, pid_, local_time_text(window_start_ / 1'000'000'000));
  std::string recording = report::recording_path(output, settings_.keep_jfr);
  std::string error;
  bool written = write_output(recording, &error, [&](int fd, std::string* why) {
    return write_bytes(fd, bytes, recording, why);
  });
  if (!written) {
    // The window stays in the processes' recordings, which are kept; the next chunk
    // has a name of its own (this one's may be what failed: a directory there).
    std::cerr << "nmprof: chunk " << number_ << " was not written: " << text::escape_controls(error) << "\n";
    failed_ = true;
    number_++;
    window_start_ = end_nanos;
    return kExitFailure;
  }
  upload::ChunkRequests requests;
  if (uploader_)
    requests = uploader_->prepare({recording, output, window_start_, end_nanos, pid_, settings_.program});
  report::Delivery delivery{recording, output, settings_.keep_jfr, settings_.top, settings_.quiet || !last,
                            last ? settings_.fail_on_live : std::nullopt, last ? settings_.live_at_end : "live at chunk end"};
  delivery.confidence = settings_.confidence;
  int delivered = report::deliver_recording(delivery, std::cerr);
  if (uploader_) uploader_->send(std::move(requests), delivered != kExitFailure);
  if (delivered == kExitFailure) failed_ = true;
  // After a failure, every recording is kept from then on.
  if (!failed_) {
    windows_.let_go_written(&warnings);
    print_warnings(warnings);
  }
  std::vector<std::string> files = {output};
  if (settings_.keep_jfr && recording != output) files.push_back(recording);
  written_.push_back(std::move(files));
  keep_newest();
  number_++;
  window_start_ = end_nanos;
  return delivered;
}

void RecordingLoop::keep_newest() {
  while (settings_.keep && written_.size() > settings_.keep) {
    for (const std::string& file : written_.front()) {
      // Only what nmprof wrote: something else put there since (a directory) stays.
      std::error_code error;
      if (!std::filesystem::remove(file, error) && error)
        std::cerr << "nmprof: warning: --keep: cannot remove " << text::escape_controls(file) << ": "
                  << error.message() << "\n";
    }
    written_.pop_front();
  }
}

}  // namespace nmprof::cli
