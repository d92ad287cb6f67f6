#include "cli/attach/attach_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <ctime>
#include <iostream>
#include <vector>

#include "attach/dynamic_load_warning.h"
#include "attach/hotspot_vm.h"
#include "attach/process_end.h"
#include "attach/ptrace/native_process.h"
#include "attach/ptrace/tracee_wait.h"
#include "attach/seccomp_sandbox.h"
#include "attach/target_files.h"
#include "attach/vm_detection.h"
#include "cli/agent_location.h"
#include "cli/attach/attach_recordings.h"
#include "cli/exit_codes.h"
#include "cli/options/count_check.h"
#include "cli/options/path_check.h"
#include "cli/options/seconds_option.h"
#include "cli/output/output_check.h"
#include "cli/output/output_writer.h"
#include "cli/output/recording_merge.h"
#include "cli/report/report_command.h"
#include "cli/run/profile_signals.h"
#include "cli/chunks/recording_loop.h"
#include "cli/signals.h"
#include "cli/upload/uploader.h"
#include "common/safe_file.h"
#include "formats/text/utf8.h"
#include "protocol/attach_request.h"

namespace nmprof::cli {
namespace {

constexpr double kMaxDuration = 365 * 24 * 3600;
constexpr const char* kDefaultOutput = "nmprof-%p.jfr";

// -o as given (%p, %t, and %n with --loop unexpanded), or the default.
std::string output_pattern(const AttachOptions& options) {
  return options.output.empty() ? kDefaultOutput : options.output;
}
constexpr double kMinTimeout = 0.001;  // a millisecond: requests wait in whole ones
constexpr double kMaxTimeout = 24 * 3600;

volatile sig_atomic_t g_interrupts = 0;  // of a one-shot attach: the first ends its recording

void on_interrupt(int signo, siginfo_t* info, void*) {
  if (!raised_by_own_write(signo, info)) g_interrupts = g_interrupts + 1;
}

std::string value(const AttachReply& reply, const char* key) {
  auto it = reply.find(key);
  return it == reply.end() ? std::string() : it->second;
}

// Counts as the user reads them, "?" when the reply has none.
std::string count(const AttachReply& reply, const char* key) {
  auto n = reply_count(reply, key);
  return n ? std::to_string(*n) : "?";
}

std::string mebibytes(const AttachReply& reply, const char* key) {
  auto n = reply_count(reply, key);
  return n ? std::to_string((*n + (1 << 19)) >> 20) : "?";
}

constexpr off_t kMaxReplyBytes = 64 * 1024;  // a reply is a few lines

// The agent's reply, read from the file nmprof made for it (kept open, so that the
// name can be replaced meanwhile to no effect). An empty file: the agent said nothing.
attach::Result<AttachReply> read_reply(int fd, const attach::TargetProcess& target, const std::string& label,
                                       const std::string& token) {
  const std::string& jvm = label;
  struct stat st {};
  if (fstat(fd, &st) != 0 || safe_file::check_owned_regular(fd, target.status.euid) != 0 || st.st_size > kMaxReplyBytes)
    return attach::Error{"the reply file of " + jvm + " was tampered with; not trusting it"};
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (text.empty()) return AttachReply();
  AttachReply reply = parse_attach_reply(text);
  if (value(reply, "token") != token)
    return attach::Error{"the reply of " + jvm + " does not carry nmprof's token; not trusting it"};
  return reply;
}

// How requests reach the agent: the JVM's attach mechanism, or ptrace for any other
// process. Either way the agent answers with a code and a reply file.
struct Channel {
  attach::TargetProcess target;
  std::string label;  // "JVM 4123", "process 4123": for messages
  std::function<attach::Result<int>(std::string_view library, std::string_view request)> load_agent;
  // How long the target was stopped for the last request (ptrace only).
  std::function<std::chrono::microseconds()> last_stop = {};
  // Whether requests go through ptrace: a termination signal then ends nmprof once the
  // request is over (its thread put back, its reply file removed), at most a second later.
  bool ptrace = false;
};

// One attach session: where the agent is, and how to talk to it. The target's /tmp
// is held open from the start, so that every file nmprof or the agent made there is
// removed even when the target exits meanwhile.
class Session {
 public:
  Session(Channel channel, std::string library, std::optional<attach::TargetFile> copy, attach::TargetTmp tmp,
          bool force)
      : channel_(std::move(channel)),
        library_(std::move(library)),
        copy_(std::move(copy)),
        tmp_(std::move(tmp)),
        force_(force) {}

  const attach::TargetProcess& target() const { return channel_.target; }
  const attach::TargetTmp& tmp() const { return tmp_; }

  // Stops the recording of `pid`, a process the target forked while it recorded,
  // which has the agent loaded already (nothing to do when it is not recording).
  attach::Result<void> stop_child(pid_t pid, std::chrono::milliseconds timeout) const {
    return stop_forked(pid, library_, timeout, force_);
  }
  // The same without a session: for processes forked by a target that has ended.
  static attach::Result<void> stop_forked(pid_t pid, const std::string& library, std::chrono::milliseconds timeout,
                                          bool force);
  const std::string& label() const { return channel_.label; }
  // " (stopped 12.3 ms)" after a request through ptrace, "" otherwise.
  std::string stop_text() const {
    if (!channel_.last_stop) return "";
    char text[48];
    snprintf(text, sizeof text, " (it stopped for %.1f ms)", channel_.last_stop().count() / 1000.0);
    return text;
  }
  int pid() const { return target().pid; }

  // Sends one request; on success the agent's reply (key=value), otherwise a message.
  // The reply file is made by nmprof as the JVM's user under a name nobody can guess,
  // and the reply must carry a token only this request knows.
  attach::Result<AttachReply> send(AttachRequest request) const {
    AttachCommand command = request.command;
    auto answer = exchange(std::move(request));
    if (!answer) return answer.error();
    auto& [code, reply] = *answer;
    if (code == kAttachOk) return reply;
    return attach::Error{refusal(code, command, reply)};
  }

 private:
  // The agent's answer code and reply.
  attach::Result<std::pair<int, AttachReply>> exchange(AttachRequest request) const {
    std::optional<attach::TraceSignals> held_back;
    if (channel_.ptrace) held_back.emplace();
    auto reply_file = attach::create_in_target(target(), tmp_.unpredictable_path("nmprof-reply-", ""), 0600);
    if (!reply_file) return reply_file.error();
    request.options.reply = reply_file->path;
    std::string token = attach::unpredictable_name();
    request.options.token = token;
    auto code = channel_.load_agent(library_, format_attach_request(request));
    forget_copy();
    auto reply = read_reply(reply_file->fd.get(), target(), label(), token);
    remove_from_tmp(reply_file->path, reply_file->fd.get());
    if (!code) return code.error();
    if (!reply) return reply.error();
    return std::pair{*code, std::move(*reply)};
  }

  std::string refusal(int code, AttachCommand command, const AttachReply& reply) const {
    const std::string& jvm = label();
    auto said = [&reply](const char* fallback) {
      auto it = reply.find("message");
      return it != reply.end() ? it->second : std::string(fallback);
    };
    switch (code) {
      case kAttachAlreadyRecording:
        return "nmprof is already recording in " + jvm + " (into " + value(reply, "file") +
               "); take it with 'nmprof attach " + std::to_string(pid()) + " stop -o FILE' first";
      case kAttachNotRecording:
        return "nmprof is not recording in " + jvm + "; start with 'nmprof attach " + std::to_string(pid()) +
               " start'";
      case kAttachBadRequest:
        return "the agent in " + jvm + " refused the request: " + said("bad options");
      default:
        return std::string("the agent in ") + jvm + " could not " + attach_command_name(command) + ": " +
               said("no reason given (see its stderr)");
    }
  }

  // A copy of the agent made for the target is deleted once it has loaded it (it
  // stays mapped, and is found by its name from then on: agent_for).
  void forget_copy() const {
    if (copy_) remove_from_tmp(copy_->path, copy_->fd.get());
    copy_.reset();
  }

  // A file nmprof made in the target's /tmp ("/tmp/<name>").
  void remove_from_tmp(const std::string& path, int fd) const {
    (void)attach::remove_from_target_tmp(target(), tmp(), path.substr(path.rfind('/') + 1), fd);
  }

  Channel channel_;
  std::string library_;
  mutable std::optional<attach::TargetFile> copy_;
  attach::TargetTmp tmp_;
  bool force_;  // --force: the processes it forked are under its seccomp filter too
};

attach::Result<Channel> native_channel(int pid, std::chrono::milliseconds timeout, bool force) {
  auto process = attach::NativeProcess::find(pid, timeout, force);
  if (!process) return process.error();
  auto shared = std::make_shared<attach::NativeProcess>(std::move(*process));
  return Channel{shared->process(), "process " + std::to_string(pid),
                 [shared](std::string_view library, std::string_view request) {
                   return shared->load_agent(library, request);
                 },
                 [shared] { return shared->last_stop(); },
                 true};
}

attach::Result<void> Session::stop_forked(pid_t pid, const std::string& library, std::chrono::milliseconds timeout,
                                          bool force) {
  auto channel = native_channel(pid, timeout, force);
  if (!channel) return channel.error();
  auto tmp = attach::open_target_tmp(channel->target);
  if (!tmp) return tmp.error();
  Session child(std::move(*channel), library, std::nullopt, std::move(*tmp), force);
  auto answer = child.exchange({AttachCommand::Stop, {}});
  if (!answer) return answer.error();
  // Not recording: forked after the target's stop, or stopped already.
  if (answer->first != kAttachOk && answer->first != kAttachNotRecording)
    return attach::Error{child.refusal(answer->first, AttachCommand::Stop, answer->second)};
  return {};
}

std::chrono::milliseconds timeout_of(const AttachOptions& options) {
  return std::chrono::milliseconds(static_cast<long long>(options.timeout * 1000));
}

// The copy of the agent an earlier attach loaded into the JVM: a library already
// loaded is found by its name, without reading any file.
std::optional<std::string> loaded_copy(const attach::TargetProcess& target, const attach::TargetTmp& tmp) {
  auto maps = attach::read_proc_file(target, "maps");
  if (!maps) return std::nullopt;
  for (std::string_view file : attach::mapped_files(*maps)) {
    std::string_view name = file.substr(file.rfind('/') + 1);
    if (name.rfind("nmprof-agent-", 0) == 0 && name.size() == 13 + 26 + 3 && name.substr(39) == ".so")
      return tmp.path + "/" + std::string(name);
  }
  return std::nullopt;
}

// The agent library as the target sees it: ours, the copy it loaded before, or a new
// copy in its /tmp when it cannot read ours (a container, or our path not readable by
// the JVM's user). Never a file of that name that someone else may have put there.
attach::Result<std::pair<std::string, std::optional<attach::TargetFile>>> agent_for(const attach::TargetProcess& target,
                                                                                    const attach::TargetTmp& tmp,
                                                                                    const std::string& agent) {
  if (attach::shares_root_with(target) && attach::open_in_target(target, agent, attach::Owner::anyone))
    return std::pair{agent, std::optional<attach::TargetFile>()};
  if (auto loaded = loaded_copy(target, tmp)) return std::pair{*loaded, std::optional<attach::TargetFile>()};
  auto placed = attach::place_in_target(target, tmp.unpredictable_path("nmprof-agent-", ".so"), agent);
  if (!placed) return placed.error();
  std::string path = placed->path;
  return std::pair{path, std::optional<attach::TargetFile>(std::move(*placed))};
}

// An output not written: what the agent recorded stays where it is, and is named.
attach::Error kept(const attach::Error& error, const AttachRecordings& recordings) {
  return attach::Error{error.message + "; the recording is kept in " + recordings.where()};
}

// Copies the whole chunks of the recording behind `fd` to the user's file.
attach::Result<void> collect(int fd, const std::string& output) {
  size_t complete = complete_chunks(fd);
  if (complete == 0) return attach::Error{"the recording is empty: the agent wrote nothing readable"};
  std::string error;
  if (!write_output(output, &error, [&](int out, std::string* why) { return copy_file(fd, complete, out, why); }))
    return attach::Error{error};
  return {};
}

// The processes the target forked while recording record on after its stop: each
// (a descendant with the agent in it, or one that still writes its own file once the
// target has exited and they are no longer its descendants) gets a stop request of
// its own, so that its file is whole and no agent records in it any longer. One that
// exited meanwhile wrote its file as it ended; one forked meanwhile by a child is
// found on the next look.
using StopChild = std::function<attach::Result<void>(pid_t)>;

void stop_children(const attach::TargetProcess& target, const std::string& label, AttachRecordings& recordings,
                   const StopChild& stop_child) {
  std::vector<pid_t> asked;  // each is asked once
  for (;;) {
    recordings.gather();
    std::vector<pid_t> children = attach::descendants_with_nmprof(target.pid);
    for (pid_t child : recordings.children_recording())
      if (pid_t pid = attach::host_pid_of(target, child)) children.push_back(pid);
    std::erase_if(children, [&](pid_t pid) { return std::find(asked.begin(), asked.end(), pid) != asked.end(); });
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    if (children.empty()) return;
    for (pid_t child : children) {
      asked.push_back(child);
      auto stopped = stop_child(child);
      if (!stopped && kill(child, 0) == 0)
        std::cerr << "nmprof: warning: process " << child << ", forked by " << label
                  << ", records on: " << stopped.error().message << "\n";
    }
  }
}

// Stops what the target's children record, collects their recordings with the
// target's into `output` and removes them all. When the output cannot be written (a
// full disk), they stay where they are, and the error says where.
attach::Result<void> collect_all(const attach::TargetProcess& target, const std::string& label,
                                 AttachRecordings& recordings, const std::string& output, const StopChild& stop_child) {
  stop_children(target, label, recordings, stop_child);
  recordings.gather();
  auto collected = recordings.write_to(output);
  if (!collected && recordings.hold_a_recording()) return kept(collected.error(), recordings);
  recordings.remove();
  return collected;
}

attach::Result<void> collect_all(const Session& session, AttachRecordings& recordings, const std::string& output,
                                 std::chrono::milliseconds timeout) {
  return collect_all(session.target(), session.label(), recordings, output,
                     [&](pid_t child) { return session.stop_child(child, timeout); });
}

// Converts the collected recording to the format -o names, summarizes it, and queues
// its uploads (with --upload, --otlp; the caller waits for them with
// Uploader::finish). Returns the exit status: kExitFailure when the conversion failed.
int summarize(const std::string& output, const AttachOptions& options, upload::Uploader* uploader) {
  upload::ChunkRequests requests;  // made before the conversion may remove the recording
  if (uploader)
    requests = uploader->prepare({report::recording_path(output, options.keep_jfr), output, 0, 0, options.pid, ""});
  int status = report::deliver_recording(
      {report::recording_path(output, options.keep_jfr), output, options.keep_jfr, options.top, options.quiet, std::nullopt,
       "live at end"},  // the JVM may run on
      std::cerr);
  if (!options.recording.no_live && !options.quiet)
    std::cerr << "  note: live blocks are those allocated since the attach; earlier ones are not known\n";
  if (uploader) uploader->send(std::move(requests), status != kExitFailure);
  return status;
}

AttachRequest start_request(const AttachOptions& options, const Session& session, std::string* error) {
  AttachRequest request{AttachCommand::Start, {}};
  if (!to_agent_options(options.recording, &request.options, error)) return request;
  request.options.file = new_recording_template(session.target(), session.tmp());
  // The agent stays out of a process under seccomp filters nobody checked; here the
  // user went ahead knowing of them (--force, or the warning a JVM's gets).
  if (auto sandbox = attach::seccomp_sandbox_of(session.target().pid))
    request.options.seccomp_checked = static_cast<unsigned>(sandbox->filters > 0 ? sandbox->filters : 1);
  return request;
}

// The recordings a start asked the agent to write.
AttachRecordings started_recordings(const Session& session, const AttachRequest& start) {
  std::string expected = recording_of(start.options.file, session.target().nspid);
  return AttachRecordings(session.target(), session.tmp(), recording_stem(session.target(), session.tmp(), expected));
}

// A start that failed: what the agent wrote before it failed, or before the target
// exited, is removed (with nmprof's directory in a root without /tmp).
int start_failed(const Session& session, AttachRecordings& recordings, const attach::Error& error) {
  recordings.gather();
  recordings.remove();
  attach::remove_if_empty(session.tmp());
  return fail(kExitFailure, error.message);
}

// The last chunks of --loop, once the target's recording has stopped (or the target
// has ended): the processes it forked are stopped first, so that their files are
// whole; the recordings are then removed, or kept and named when a chunk could not
// be written.
int finish_chunks(const Session& session, AttachRecordings& recordings, RecordingLoop& loop,
                  const AttachOptions& options, upload::Uploader* uploader) {
  std::chrono::milliseconds timeout = timeout_of(options);
  stop_children(session.target(), session.label(), recordings,
                [&](pid_t child) { return session.stop_child(child, timeout); });
  int status = loop.finish(wall_clock_nanos());
  if (loop.all_written())
    recordings.remove();
  else
    std::cerr << "nmprof: the recordings are kept in " << text::escape_controls(recordings.where()) << "\n";
  attach::remove_if_empty(session.tmp());
  if (!options.recording.no_live && !options.quiet)
    std::cerr << "  note: live blocks are those allocated since the attach; earlier ones are not known\n";
  sig_atomic_t stopped_by = g_interrupts;  // later ones end the uploads' flush
  if (uploader) uploader->finish([stopped_by] { return g_interrupts > stopped_by; });
  return status;
}

int one_shot(const Session& session, const AttachOptions& options, const std::string& output,
             upload::Uploader* uploader) {
  std::string error;
  AttachRequest start = start_request(options, session, &error);
  if (!error.empty()) return fail(kExitUsage, error);
  uint64_t chunk_limit = chunk_size_limit(options.loop, start.options);
  int64_t started_nanos = wall_clock_nanos();
  std::string expected = recording_of(start.options.file, session.target().nspid);
  attach::ProcessEnd end(session.pid());
  AttachRecordings recordings = started_recordings(session, start);
  // From now on a signal that would end nmprof ends the recording instead, once it is
  // started: never a recording left running in the target, nor its file.
  struct sigaction interrupt = {};
  interrupt.sa_sigaction = on_interrupt;
  interrupt.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&interrupt.sa_mask);
  for (int signo : kStoppingSignals) sigaction(signo, &interrupt, nullptr);
  auto started = session.send(start);
  if (!started) return start_failed(session, recordings, started.error());
  std::string in_target = value(*started, "file");
  if (in_target != expected)
    return fail(kExitFailure, "the agent in " + session.label() + " records into " + in_target +
                                  ", not into " + expected + " as asked");
  // Held open from now on, it can be read even when the JVM (and its container) is gone.
  recordings.gather();

  if (!options.quiet) {
    std::cerr << "nmprof: recording " << session.label() << session.stop_text();
    if (options.duration > 0) std::cerr << " for " << options.duration << " s";
    std::cerr << " (Ctrl-C to stop)\n";
  }
  std::optional<RecordingLoop> loop;
  if (options.loop.seconds) {
    if (uploader) uploader->keep_newest_chunks(options.loop.keep);
    recordings.let_files_close();
    loop.emplace(LoopSettings{options.loop.seconds, output_pattern(options),
                              options.loop.keep, chunk_limit, options.keep_jfr, options.quiet, options.top, std::nullopt,
                              report::kDefaultConfidence, "", "live at end"},
                 recordings, started_nanos, uploader);
    loop->command_started(session.pid());
    loop->start();
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.duration);
  bool exited = false;
  while (!g_interrupts && !(exited = end.ended(std::chrono::milliseconds(100))))
    if (options.duration > 0 && std::chrono::steady_clock::now() >= deadline) break;
  if (loop) loop->pause();  // the recordings are nmprof's main thread's from now on
  if (exited) {
    // Killed: what it did since its agent last wrote is missing, and the summary says so.
    if (!options.quiet || end.killed())
      std::cerr << "nmprof: " << session.label() << " " << end.how() << "; collecting what it recorded"
                << (end.killed() ? " up to its last write" : "") << "\n";
  } else if (auto stopped = session.send({AttachCommand::Stop, {}}); !stopped) {
    std::cerr << "nmprof: " << text::escape_controls(stopped.error().message)
              << "; collecting what was written so far\n";
  }
  if (loop) return finish_chunks(session, recordings, *loop, options, uploader);
  // Through the directory held open: also when the target has exited meanwhile.
  auto collected = collect_all(session, recordings, report::recording_path(output, options.keep_jfr),
                               timeout_of(options));
  attach::remove_if_empty(session.tmp());
  if (!collected) return fail(kExitFailure, collected.error().message);
  sig_atomic_t stopped_by = g_interrupts;  // later ones end the uploads' flush
  int status = summarize(output, options, uploader);
  if (uploader) uploader->finish([stopped_by] { return g_interrupts > stopped_by; });
  return status;
}

// Copies out the recording the agent's reply to dump or stop names (`in_target`).
int deliver_taken(const Session& session, const AttachOptions& options, const std::string& output, bool stop,
                  const std::string& in_target, upload::Uploader* uploader) {
  std::string recording_path = report::recording_path(output, options.keep_jfr);
  if (std::string stem = recording_stem(session.target(), session.tmp(), in_target); !stem.empty()) {
    // With the recordings of the processes the target forked meanwhile.
    AttachRecordings recordings(session.target(), session.tmp(), stem);
    attach::Result<void> collected{};
    if (stop) {
      collected = collect_all(session, recordings, recording_path, timeout_of(options));
      attach::remove_if_empty(session.tmp());
    } else {
      recordings.gather();
      if (collected = recordings.write_to(recording_path); !collected && recordings.hold_a_recording())
        collected = kept(collected.error(), recordings);
    }
    if (!collected) return fail(kExitFailure, collected.error().message);
    return summarize(output, options, uploader);
  }
  auto recording = attach::open_in_target(session.target(), in_target);
  if (!recording) return fail(kExitFailure, recording.error().message);
  // A recording nmprof did not start is not nmprof's to delete (file= of -agentpath is the user's).
  auto collected = collect(recording->get(), recording_path);
  if (!collected) return fail(kExitFailure, collected.error().message);
  return summarize(output, options, uploader);
}

// dump and stop: the agent says where its recording is; nmprof copies it out. Once the
// agent has replied, a signal waits until the output is written (Ctrl-C during a
// stop's collection left the recordings in the target's /tmp, during the conversion
// to -o x.html a .nmprof-x.jfr beside the output).
int take_recording(const Session& session, const AttachOptions& options, const std::string& output, bool stop,
                   upload::Uploader* uploader) {
  auto reply = session.send({stop ? AttachCommand::Stop : AttachCommand::Dump, {}});
  if (!reply) return fail(kExitFailure, reply.error().message);
  ProfileSignals signals;
  int status = deliver_taken(session, options, output, stop, value(*reply, "file"), uploader);
  if (uploader) uploader->finish(signals.profile_written());
  signals.end_by_held_signal();
  return status;
}

// dump, stop or status of a process that has ended: what its agent left in /tmp is
// delivered (by stop: and removed, with its forked processes' recordings, stopped
// first if they still record), or named (status). Nothing when it left nothing.
std::optional<int> take_left_recording(const AttachOptions& options, const std::string& output,
                                       const std::string& agent, upload::Uploader* uploader) {
  auto left = find_left_recordings(options.pid);
  if (!left) return std::nullopt;
  AttachRecordings recordings(left->owner, left->tmp, left->stem);
  recordings.gather();
  if (recordings.where().empty()) return std::nullopt;  // none nmprof may take (another name for the same file)
  std::string pid = std::to_string(options.pid), label = "process " + pid;
  if (options.action == "status")
    return fail(kExitFailure, label + " has ended; the recording its agent left is in " + recordings.where() +
                                  ": take it with 'nmprof attach " + pid + " stop -o FILE'");
  if (!options.quiet) {
    std::cerr << "nmprof: " << label << " has ended; delivering the recording its agent left in "
              << text::escape_controls(recordings.where()) << "\n";
    if (left->older_sessions > 0)
      std::cerr << "  note: older attach sessions of a process " << pid << " left " << left->older_sessions
                << " more in /tmp (nmprof-" << pid << "-*.jfr)\n";
  }
  ProfileSignals signals;
  std::string recording_path = report::recording_path(output, options.keep_jfr);
  attach::Result<void> collected{};
  if (options.action == "stop")
    collected = collect_all(left->owner, label, recordings, recording_path, [&](pid_t child) {
      return Session::stop_forked(child, agent, timeout_of(options), options.force);
    });
  else if (collected = recordings.write_to(recording_path); !collected && recordings.hold_a_recording())
    collected = kept(collected.error(), recordings);
  int status = collected ? summarize(output, options, uploader) : fail(kExitFailure, collected.error().message);
  if (uploader) uploader->finish(signals.profile_written());
  signals.end_by_held_signal();
  return status;
}

int status(const Session& session) {
  auto reply = session.send({AttachCommand::Status, {}});
  if (!reply) return fail(kExitFailure, reply.error().message);
  if (value(*reply, "recording") != "true") {
    std::cout << session.label() << ": nmprof is not recording\n";
    return 0;
  }
  std::cout << session.label() << ": recording into " << value(*reply, "file") << " (in its file system)\n"
            << "  samples " << count(*reply, "samples") << ", lost " << count(*reply, "lost_samples")
            << ", live sampled blocks " << count(*reply, "tracked_blocks") << ", ~" << mebibytes(*reply, "live_bytes")
            << " MiB estimated live\n";
  return 0;
}

// A HotSpot JVM is asked through its attach mechanism; any other process gets the
// agent through ptrace (attach/ptrace/native_process.h).
attach::Result<Session> open_session(const AttachOptions& options, bool starts, const std::string& agent) {
  int pid = options.pid;
  auto timeout = timeout_of(options);
  auto target = attach::inspect_process(pid);
  if (!target) return target.error();
  auto maps = attach::read_proc_file(*target, "maps");
  // Without the rights to read its memory map, nmprof cannot tell a JVM from another process.
  if (!maps)
    if (auto allowed = attach::check_attach_permission(*target, "process"); !allowed) return allowed.error();
  std::optional<Channel> channel;
  std::shared_ptr<attach::HotSpotVm> vm;
  if (maps && attach::vm_kind_from_maps(*maps) == attach::VmKind::none) {
    auto native = native_channel(pid, timeout, options.force);
    if (!native) return native.error();
    channel = std::move(*native);
  } else {
    attach::AttachTimeouts timeouts;
    timeouts.listener = timeout;
    timeouts.reply = std::max(timeouts.reply, timeouts.listener);
    auto found = attach::HotSpotVm::find(pid, timeouts);
    if (!found) return found.error();
    vm = std::make_shared<attach::HotSpotVm>(std::move(*found));
    // The JVM loads the agent itself: no injection to refuse, but the agent's own calls
    // meet the filter (seccomp_sandbox.h).
    if (std::string warning = attach::jvm_sandbox_warning(vm->process()); starts && !warning.empty())
      std::cerr << "nmprof: warning: " << warning << "\n";
    channel = Channel{vm->process(), "JVM " + std::to_string(pid),
                      [vm, pid](std::string_view library, std::string_view request) -> attach::Result<int> {
                        attach::ProcessEnd end(pid);
                        auto code = vm->load_agent(library, request);
                        if (code || !end.ended(std::chrono::milliseconds(100))) return code;
                        // Its socket closed as it died: said so, not "closed the connection".
                        std::string ended = "JVM " + std::to_string(pid) + " " + end.how() +
                                            " while its agent answered nmprof's request";
                        if (end.killed_by() == SIGSYS)
                          ended += ": its seccomp filter refused one of the agent's system calls";
                        return attach::Error{ended};
                      }};
  }
  // Held from before the first request: what nmprof or the agent make there is removed
  // through it, also once the target has exited.
  auto tmp = attach::open_target_tmp(channel->target);
  if (!tmp) return tmp.error();
  if (tmp->own() && starts && !options.quiet)
    std::cerr << "nmprof: note: process " << pid << " has no /tmp in its root (a chroot?): the agent's files go to "
              << tmp->path << ", which nmprof made there (" << tmp->here << ") and removes once it is empty\n";
  auto library = agent_for(channel->target, *tmp, agent);
  if (!library) return library.error();
  auto& [library_path, copy] = *library;
  if (vm && starts) {
    auto warning = attach::forecast_dynamic_load_warning(*vm, library_path);
    if (warning && warning->printed && !options.quiet)
      std::cerr << "nmprof: note: JDK " << warning->jdk_version
                << " prints a warning about a dynamically loaded agent on the JVM's stderr (JEP 451); start the "
                   "JVM with -XX:+EnableDynamicAgentLoading to avoid it, or load nmprof at startup with "
                   "-agentpath:"
                << agent << "=<options>\n";
  }
  return Session(std::move(*channel), library_path, std::move(copy), std::move(*tmp), options.force);
}

}  // namespace

void add_attach_command(CLI::App& app, AttachOptions& options) {
  CLI::App* attach = app.add_subcommand(
      "attach", "Profile a running process: a HotSpot JVM through its attach API, any other through ptrace");
  attach->add_option("pid", options.pid, "The process id")->required()->check(CLI::PositiveNumber);
  attach->add_option("action", options.action,
                     "Omitted: record for --duration (or until Ctrl-C) and collect. Or, for long sessions:\n"
                     "start (begin recording), status, dump (copy what is recorded so far), stop (copy and end)")
      ->check(CLI::IsMember({"start", "status", "dump", "stop"}));
  add_recording_options(attach, options.recording);
  add_seconds_option(attach, "--duration", options.duration, {0, kMaxDuration},
                     "Seconds to record (one shot; default: until Ctrl-C; at most a year)");
  attach->add_option("-o,--output", options.output, "Where the profile goes (default nmprof-<pid>.jfr; %p, %t)")
      ->check(path_check());
  attach->add_option("--top", options.top, "Stacks shown in the summary")->default_val(options.top)
      ->check(count_check(1, kMaxTop, "stacks"))
      ->type_name("N");
  attach->add_flag("-q,--quiet", options.quiet, "Print no summary, only where the file is");
  attach->add_flag("--keep-jfr", options.keep_jfr, "With -o in another format (x.pb.gz), keep the JFR too (x.jfr)");
  add_loop_options(attach, options.loop);
  add_trust_environment_flag(attach, options.trust_environment);
  add_upload_options(attach, options.upload);
  attach->add_flag("--force", options.force,
                   "Attach through ptrace to a process under seccomp all the same: a call its filter refuses kills "
                   "it (man nmprof)");
  add_seconds_option(attach, "--timeout", options.timeout, {kMinTimeout, kMaxTimeout},
                     "Seconds the target gets to answer each request (at most a day)")
      ->default_str(std::to_string(static_cast<int>(options.timeout)));
  attach->footer(
      "Examples:\n"
      "  nmprof attach 4123 --nativemem 1m --duration 30 -o leak.jfr\n"
      "  nmprof attach 4123 start --nativemem 1m\n"
      "  nmprof attach 4123 status\n"
      "  nmprof attach 4123 dump -o now.jfr\n"
      "  nmprof attach 4123 stop -o all.jfr");
}

int attach_command(const AttachOptions& options) {
  std::string output = expand_path_template(output_pattern(options), options.pid, local_time_text(time(nullptr)));
  std::string error;
  if (options.loop.seconds && !options.action.empty())
    return fail(kExitUsage, "--loop writes chunks while a one-shot attach records: give no action (" + options.action +
                                ")");
  if (std::string problem = loop_problem(options.loop, output_pattern(options));
      !problem.empty())
    return fail(kExitUsage, problem);
  bool starts = options.action.empty() || options.action == "start";
  if (AgentOptions checked; starts && !to_agent_options(options.recording, &checked, &error))
    return fail(kExitUsage, error);
  bool writes_output = options.action.empty() || options.action == "dump" || options.action == "stop";
  if (writes_output && !check_output(output, &error)) return fail(kExitFailure, error);
  std::string agent = find_agent(options.trust_environment, &error);
  if (agent.empty()) return fail(kExitFailure, error);
  if (options.upload.wanted() && !options.action.empty() && options.action != "stop")
    return fail(kExitUsage, "--upload and --otlp send what a one-shot attach or a stop collects, not what " +
                                options.action + " does");
  int failed = 0;
  auto uploader = upload::start_uploads(options.upload, options.recording.tags, options.quiet, &failed);
  if (failed) return failed;

  // Ended since its attach began: what the agent left is still there.
  if (!starts && attach::has_ended(options.pid))
    if (auto taken = take_left_recording(options, output, agent, uploader.get())) return *taken;
  auto opened = open_session(options, starts, agent);
  if (!opened) return fail(kExitFailure, opened.error().message);
  const Session& session = *opened;

  if (options.action.empty()) return one_shot(session, options, output, uploader.get());
  if (options.action == "status") return status(session);
  if (options.action == "dump" || options.action == "stop")
    return take_recording(session, options, output, options.action == "stop", uploader.get());
  AttachRequest start = start_request(options, session, &error);
  if (!error.empty()) return fail(kExitUsage, error);
  auto started = session.send(start);
  if (!started) {
    AttachRecordings written = started_recordings(session, start);
    return start_failed(session, written, started.error());
  }
  std::cerr << "nmprof: recording " << session.label() << " into " << value(*started, "file") << session.stop_text()
            << " (in its file system)\n";
  if (!options.quiet)
    std::cerr << "  look with 'nmprof attach " << options.pid << " status', copy with 'nmprof attach " << options.pid
              << " dump -o FILE', end with 'nmprof attach " << options.pid << " stop -o FILE'\n";
  return 0;
}

}  // namespace nmprof::cli
