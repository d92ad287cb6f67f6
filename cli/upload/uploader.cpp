#include "cli/upload/uploader.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/exit_codes.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/model/report.h"
#include "cli/report/render/pprof_export.h"
#include "cli/upload/backend_labels.h"
#include "cli/upload/otlp_encoder.h"
#include "formats/pprof/gzip.h"
#include "formats/text/utf8.h"
#include "profile/jfr_profile.h"
#include "profile/stack_simplification.h"

namespace nmprof::upload {
namespace {

// One line on stderr in one write, so that the lines of the queues' threads and of
// the summary do not mix.
void say(const std::string& line) {
  std::string text = "nmprof: " + line + "\n";
  ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path);
  return bytes.str();
}

std::string host_name(const profile::Profile& profile) {
  if (!profile.processes.empty() && !profile.processes[0].host_name.empty()) return profile.processes[0].host_name;
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

struct Uploader::Destination {
  std::string name;  // "Pyroscope at http://...", for messages
  bool pyroscope = false;
  std::unique_ptr<DeliveryQueue> queue;
  // The queue's thread's, until finish():
  bool outage_said = false;
  std::string last_refusal;
  bool refused = false;
};

Uploader::Uploader(UploadSettings settings, bool quiet) : settings_(std::move(settings)), quiet_(quiet) {}

Uploader::~Uploader() = default;

std::unique_ptr<Uploader> Uploader::create(UploadSettings settings, bool quiet, std::string* error) {
  std::unique_ptr<Uploader> uploader(new Uploader(std::move(settings), quiet));
  const UploadSettings& s = uploader->settings_;
  std::vector<std::pair<std::string, bool>> names;
  if (s.pyroscope) names.emplace_back("Pyroscope at " + s.pyroscope->url.text(), true);
  if (s.otlp) names.emplace_back("the OTLP collector at " + s.otlp->text(), false);
  for (const auto& [name, pyroscope] : names) {
    auto transport = curl_transport(s.headers, "nmprof/" NMPROF_VERSION, error);
    if (!transport) return nullptr;
    auto destination = std::make_unique<Destination>();
    destination->name = name;
    destination->pyroscope = pyroscope;
    Destination* d = destination.get();
    Uploader* u = uploader.get();
    destination->queue = std::make_unique<DeliveryQueue>(std::move(transport), kMaxQueuedBytes, Backoff{},
                                                         [u, d](const Settled& settled) { u->settled(*d, settled); });
    uploader->destinations_.push_back(std::move(destination));
  }
  return uploader;
}

void Uploader::settled(Destination& d, const Settled& settled) {
  std::string chunk = text::escape_controls(settled.chunk);
  switch (settled.outcome) {
    case Outcome::Delivered: d.outage_said = false; return;
    case Outcome::Retry:
      // Once per outage, not once per attempt; -q says only what went wrong in the end.
      if (!d.outage_said && !quiet_)
        note("upload of " + chunk + " to " + d.name + " failed (" + settled.reason + "); retrying");
      d.outage_said = true;
      return;
    case Outcome::GiveUp:
      // The server's message once; the same refusal again is named as such.
      d.refused = true;
      note("warning: " + d.name + " did not take " + chunk + " (" +
           (settled.reason == d.last_refusal ? "refused as before" : settled.reason) + "); " + stays_on_disk());
      d.last_refusal = settled.reason;
      return;
  }
}

std::string Uploader::stays_on_disk() const {
  if (!kept_chunks_) return "it stays on disk";
  return "it stays on disk while it is among the newest " + std::to_string(kept_chunks_) + " chunks (--keep)";
}

void Uploader::note(const std::string& line) {
  std::lock_guard lock(noted_mutex_);
  noted_.push_back(line);
}

void Uploader::say_noted() {
  std::vector<std::string> lines;
  {
    std::lock_guard lock(noted_mutex_);
    lines.swap(noted_);
  }
  for (const std::string& line : lines) say(line);
}

void Uploader::queue(Destination& destination, Delivery delivery) {
  std::string chunk = text::escape_controls(delivery.chunk);
  size_t bytes = delivery.request.body.size();
  if (destination.queue->push(std::move(delivery))) return;
  all_delivered_ = false;
  say("warning: " + std::to_string(kMaxQueuedBytes >> 20) + " MiB wait for " + destination.name + " already; " + chunk +
      " (" + std::to_string((bytes + 1023) >> 10) + " KiB) is not queued: " + stays_on_disk());
}

ChunkRequests Uploader::prepare(const Chunk& chunk) {
  say_noted();  // what the queues' threads said since the last chunk
  ChunkRequests requests;
  requests.deliveries.resize(destinations_.size());
  requests.recording = chunk.recording;
  std::string shown = chunk.file.empty() ? chunk.recording : chunk.file;
  profile::Profile profile;
  pprof::Profile heap;
  try {
    profile = profile::read_profile(chunk.recording);
    profile::simplify_stacks(profile, {});
    // The profile a .pb.gz output of the chunk holds (report_command.cpp).
    heap = report::to_pprof(profile, report::heap_view(profile, true), report::has_live_data(profile));
  } catch (const std::exception& e) {
    all_delivered_ = false;
    say("warning: " + text::escape_controls(shown) + " cannot be uploaded (" + text::escape_controls(e.what()) +
        "); " + stays_on_disk());
    return requests;
  }
  int64_t from = chunk.from_nanos, until = chunk.until_nanos;
  for (const auto& p : profile.processes) {
    if (!chunk.from_nanos && p.start_nanos && (!from || p.start_nanos < from)) from = p.start_nanos;
    if (!chunk.until_nanos && p.end_nanos > until) until = p.end_nanos;
  }
  const profile::Process* first = profile.processes.empty() ? nullptr : &profile.processes[0];
  std::string program = !chunk.program.empty() ? chunk.program : first ? first->executable : "";
  std::string app =
      !settings_.app.empty() ? settings_.app : app_name_from(std::filesystem::path(program).filename().string());
  int64_t pid = chunk.pid ? chunk.pid : first ? first->pid : 0;
  std::map<std::string, std::string> tags = first ? first->tags : std::map<std::string, std::string>();

  for (size_t i = 0; i < destinations_.size(); i++) {
    Destination& d = *destinations_[i];
    try {
      if (d.pyroscope) {
        PyroscopeTarget target = *settings_.pyroscope;
        target.app = app;
        for (const auto& [key, value] : tags) {
          if (auto bad = check_label(key, value))
            say("warning: a tag is not sent to Pyroscope: " + text::escape_controls(*bad));
          else
            target.labels[key] = value;
        }
        std::string payload;
        if (target.format == PyroscopeFormat::Jfr) {
          payload = read_file(chunk.recording);
        } else {
          pprof::Profile sent = heap;
          std::set<std::string> dropped;
          adapt_labels(sent, true, &dropped);
          for (const std::string& name : dropped)
            say("warning: the context attribute " + text::escape_controls(name) +
                " is not sent to Pyroscope, which takes letters, digits, _ and . in label names");
          payload = pprof::gzip(pprof::encode(sent));
        }
        requests.deliveries[i] = Delivery{shown, pyroscope_request(target, std::move(payload), from, until)};
      } else {
        OtlpSource source{{{"service.name", app, 0, {}, false},
                           {"process.pid", {}, pid, {}, true},
                           {"host.name", host_name(profile), 0, {}, false}},
                          "nmprof",
                          NMPROF_VERSION};
        for (const auto& [key, value] : tags) source.resource.push_back({key, value, 0, {}, false});
        pprof::Profile sent = heap;
        adapt_labels(sent, false, nullptr);
        requests.deliveries[i] = Delivery{shown, otlp_request(*settings_.otlp, encode_otlp(sent, source))};
      }
    } catch (const std::exception& e) {
      all_delivered_ = false;
      say("warning: " + text::escape_controls(shown) + " cannot be sent to " + d.name + " (" +
          text::escape_controls(e.what()) + "); " + stays_on_disk());
    }
  }
  return requests;
}

void Uploader::send(ChunkRequests requests, bool written) {
  for (size_t i = 0; i < destinations_.size() && i < requests.deliveries.size(); i++) {
    if (!requests.deliveries[i]) continue;
    if (!written) requests.deliveries[i]->chunk = requests.recording;
    queue(*destinations_[i], std::move(*requests.deliveries[i]));
  }
}

bool Uploader::finish(const std::function<bool()>& interrupted) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(Duration(settings_.timeout));
  bool all = all_delivered_;
  for (auto& destination : destinations_) {
    Destination& d = *destination;
    std::vector<Undelivered> left = d.queue->finish(deadline, [this, &interrupted] {
      say_noted();  // as they come, while the flush waits
      return interrupted();
    });
    say_noted();
    all = all && left.empty() && !d.refused;
    int delivered = d.queue->delivered();
    if (delivered > 0 && !quiet_)
      say((delivered == 1 ? std::string("profile") : std::to_string(delivered) + " profiles") + " sent to " + d.name);
    if (left.empty()) continue;
    // --keep may have removed the older ones meanwhile.
    std::string files, removed;
    size_t on_disk = 0;
    for (const Undelivered& u : left) {
      std::string& list = access(u.chunk.c_str(), F_OK) == 0 || !kept_chunks_ ? (on_disk++, files) : removed;
      list += (list.empty() ? "" : ", ") + text::escape_controls(u.chunk);
    }
    std::string timeout = "--upload-timeout " + seconds_text(settings_.timeout) + " s";
    std::string why = interrupted() ? "interrupted"
                      : left.front().retry_after
                          ? "the server asked to wait " + seconds_text(std::ceil(left.front().retry_after->count())) +
                                " s more (Retry-After), past " + timeout
                          : "not taken within " + timeout;
    why += "; " + (left.front().last_failure.empty() ? "no answer yet" : "last: " + left.front().last_failure);
    if (on_disk)
      say("warning: " + files + (on_disk == 1 ? " was" : " were") + " not sent to " + d.name + " (" + why + "); " +
          (on_disk == 1 ? "it stays" : "they stay") + " on disk");
    if (on_disk < left.size())
      say("warning: " + removed + " not sent to " + d.name + " (" + why + ") and removed by --keep " +
          std::to_string(kept_chunks_));
  }
  return all;
}

std::unique_ptr<Uploader> start_uploads(const cli::UploadOptions& options, const std::vector<std::string>& tags,
                                        bool quiet, int* failed) {
  *failed = 0;
  std::string error;
  auto settings = upload_settings(options, tags, &error);
  if (!settings) {
    *failed = cli::fail(cli::kExitUsage, error);
    return nullptr;
  }
  if (!options.wanted()) return nullptr;
  auto uploader = Uploader::create(std::move(*settings), quiet, &error);
  if (!uploader) *failed = cli::fail(cli::kExitFailure, error);
  return uploader;
}

}  // namespace nmprof::upload
