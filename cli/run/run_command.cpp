#include "cli/run/run_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <ctime>
#include <string_view>
#include <filesystem>
#include <iostream>

#include "cli/agent_location.h"
#include "cli/exit_codes.h"
#include "cli/options/count_check.h"
#include "cli/options/did_you_mean.h"
#include "cli/options/path_check.h"
#include "cli/options/confidence_option.h"
#include "cli/options/size_option.h"
#include "cli/output/invoking_user.h"
#include "cli/output/output_check.h"
#include "cli/output/recording_broker.h"
#include "cli/output/recording_merge.h"
#include "cli/output/staging_directory.h"
#include "cli/report/report_command.h"
#include "cli/run/child_process.h"
#include "cli/run/profile_signals.h"
#include "cli/chunks/recording_loop.h"
#include "cli/run/program_check.h"
#include "cli/run/seccomp_probe.h"
#include "cli/run/surviving_processes.h"
#include "cli/upload/uploader.h"
#include "common/signal_text.h"
#include "formats/text/utf8.h"
#include "protocol/agent_options.h"

namespace nmprof::cli {
namespace {

namespace fs = std::filesystem;


std::string appended(const char* name, const std::string& value) {
  const char* current = getenv(name);
  return current && *current ? std::string(current) + ":" + value : value;
}

// Merges the recordings of the command's processes into the output and summarizes
// it. Returns nmprof's exit status.
int write_profile(const RunOptions& options, StagingDirectory& staging, const std::vector<SurvivingProcess>& survivors,
                  const std::vector<ExecFromVforkChild>& execs, const ChildExit& child, time_t started,
                  upload::Uploader* uploader) {
  std::string error;
  std::string output = expand_path_template(options.output, child.pid, local_time_text(started));
  std::string recording = report::recording_path(output, options.keep_jfr);
  MergeResult merged;
  // A profile that could not be written fails the run, whatever the command's status
  // (a failing command's status is kept: it says more).
  auto failed = [&child] { return child.status != 0 ? child.status : kExitFailure; };
  if (!merge_recordings(staging, survivors, execs, recording, &merged, &error)) {
    fail(kExitFailure, error);
    return failed();
  }
  // They name files of the staging directory, which its parent's owner could name.
  for (const auto& warning : merged.warnings)
    std::cerr << "nmprof: warning: " << text::escape_controls(warning) << "\n";
  if (!merged.written && child.signal != 0) {
    // The program died before its recording could be written (SIGKILL, or a signal
    // nmprof does not catch).
    std::cerr << "nmprof: no recording was written: the program was killed by " << signal_text(child.signal)
              << " before anything was written (the agent writes at exit, on a crash and on the signals nmprof"
              << " forwards, and while the program allocates, at most a second apart)\n";
  } else if (!merged.written) {
    std::cerr << "nmprof: no recording was written: the agent did not run in the program (a static or setuid"
              << " executable, or one started without nmprof's LD_PRELOAD), could not write its file, or the"
              << " program ended by a raw exit_group (as Go programs do) before the agent's first write\n";
  } else {
    // Made from the recording, which the conversion to -o's format may remove; sent
    // once the output is written.
    upload::ChunkRequests requests;
    if (uploader) requests = uploader->prepare({recording, output, 0, 0, child.pid, options.command[0]});
    // The summary goes to stderr, like the program's diagnostics, so it never mixes
    // into the program's own output.
    int delivered = report::deliver_recording(
        {recording, output, options.keep_jfr, options.top, options.quiet, options.fail_on_live, "live at exit",
         merged.programs_unrecorded, options.confidence},
        std::cerr);
    if (uploader) uploader->send(std::move(requests), delivered != kExitFailure);
    // nmprof exits normally with 128 + the signal: the shell does not say that the
    // command crashed, so nmprof does (but, as shells, not for an interrupt or a pipe;
    // and -q says where the file is, nothing else).
    if (!options.quiet && child.signal != 0 && child.signal != SIGINT && child.signal != SIGPIPE)
      std::cerr << "nmprof: the command was killed by " << signal_text(child.signal) << "\n";
    if (delivered == kExitFailure) return failed();
    if ((delivered == kExitGate || delivered == kExitUndecided) && child.status == 0) return delivered;
  }
  return child.status;
}

// The command and nmprof's chunks under --loop: the status as write_profile's.
int finish_chunks(const RunOptions& options, RecordingLoop& loop, StagingDirectory& staging,
                  const std::vector<SurvivingProcess>& survivors, const ChildExit& child) {
  int delivered = loop.finish(wall_clock_nanos());
  for (const SurvivingProcess& p : survivors)
    std::cerr << "nmprof: warning: process " << p.pid << " (" << text::escape_controls(p.name)
              << ") outlived the command: what it records from now on is not in the chunks\n";
  if (loop.all_written())
    staging.remove();
  else
    std::cerr << "nmprof: the processes' recordings are kept in " << text::escape_controls(staging.path()) << "\n";
  if (!options.quiet && child.signal != 0 && child.signal != SIGINT && child.signal != SIGPIPE)
    std::cerr << "nmprof: the command was killed by " << signal_text(child.signal) << "\n";
  if (delivered == kExitFailure) return child.status != 0 ? child.status : kExitFailure;
  if ((delivered == kExitGate || delivered == kExitUndecided) && child.status == 0) return delivered;
  return child.status;
}

}  // namespace

size_t split_run_arguments(const CLI::App& run, const std::vector<std::string>& args, size_t first,
                           std::string* error) {
  for (size_t i = first; i < args.size(); i++) {
    std::string_view arg = args[i];
    if (arg == "--" || arg.empty() || arg[0] != '-') return i;
    std::string_view name = arg.substr(0, arg.find('='));
    const CLI::Option* option = run.get_option_no_throw(std::string(name));
    if (!option) {
      *error = unknown_option_message(run, arg);
      return i;
    }
    bool takes_value = option->get_items_expected_max() > 0;  // flags expect none
    if (takes_value && name == arg) i++;  // its value is the next argument
  }
  return args.size();
}

void add_run_command(CLI::App& app, RunOptions& options) {
  CLI::App* run = app.add_subcommand("run", "Run a program with the agent, record, and summarize");
  add_recording_options(run, options.recording);
  run->add_option("-o,--output", options.output, "Output file (%p: pid, %t: start time; with --loop, %n: chunk number)")
      ->default_val(options.output)
      ->check(path_check());
  run->add_option("--top", options.top, "Stacks shown in the summary")->default_val(options.top)
      ->check(count_check(1, kMaxTop, "stacks"))
      ->type_name("N");
  run->add_flag("-q,--quiet", options.quiet, "Print no summary, only where the file is");
  add_size_option(run, "--fail-on-live", options.fail_on_live,
                  "Exit with status 3 when the program exited 0 but more than SIZE was live at its end (a CI gate; "
                  "4: too few samples to tell)");
  add_confidence_option(run, options.confidence);
  run->add_flag("--keep-jfr", options.keep_jfr, "With -o in another format (x.pb.gz), keep the JFR too (x.jfr)");
  run->add_flag("--exit-watch", options.exit_watch,
                "Record to their end the processes that end without running the agent (Go programs, SIGKILL): "
                "a watch process shares each one's memory (see man nmprof)");
  add_loop_options(run, options.loop);
  add_trust_environment_flag(run, options.trust_environment);
  add_upload_options(run, options.upload);
  run->add_option("command", options.command, "The program and its arguments, after --")->required();
  run->footer(
      "Examples:\n"
      "  nmprof run -o app.jfr -- ./app --port 8080\n"
      "  nmprof run -o app.jfr -- java -jar app.jar      (Java: the agent is added to the JVM's options)\n"
      "Without the CLI:\n"
      "  LD_PRELOAD=libnmprof.so NMPROF_OPTIONS=nativemem=512k,file=app.jfr ./app\n"
      "  java -agentpath:/path/libnmprof.so=nativemem=512k,file=app.jfr -jar app.jar");
}

int run_command(const RunOptions& options) {
  AgentOptions agent;
  std::string error;
  if (!to_agent_options(options.recording, &agent, &error)) return fail(kExitUsage, error);
  agent.exit_watch = options.exit_watch;
  if (std::string problem = loop_problem(options.loop, options.output); !problem.empty())
    return fail(kExitUsage, problem);
  uint64_t chunk_limit = chunk_size_limit(options.loop, agent);
  if (!check_output(expand_path_template(options.output, kWidestPid, local_time_text(time(nullptr))), &error))
    return fail(kExitFailure, error);
  std::string program = check_program(options.command[0], &error);
  if (program.empty())
    return fail(error.rfind("command not found", 0) == 0 ? kExitNotFound : kExitCannotRun, error);
  std::string agent_path = find_agent(options.trust_environment, &error);
  if (agent_path.empty()) return fail(kExitFailure, error);
  int failed = 0;
  auto uploader = upload::start_uploads(options.upload, options.recording.tags, options.quiet, &failed);
  if (failed) return failed;
  int seccomp_filters = checked_seccomp_filters(agent_path, &error);
  if (seccomp_filters < 0) return fail(kExitCannotRun, error);
  agent.seccomp_checked = static_cast<unsigned>(seccomp_filters);

  // Under sudo the output's directory is the user's, who could swap the staging
  // directory for a link while root's processes write into it: stage in /tmp then.
  // Absolute: the program may work in another directory (sh -c 'cd /x && exec ...').
  fs::path output_parent = fs::path(options.output).parent_path();
  std::string staging_dir =
      invoked_through_sudo() ? "/tmp" : staging_parent(output_parent.empty() ? "." : output_parent.string());
  StagingDirectory staging;
  if (!staging.create(staging_dir, &error)) return fail(kExitFailure, error);
  agent.file = staging.path() + "/%p.jfr";
  agent.output = options.output;  // what the agent's lines name: the staging file means nothing to the user
  // The command's processes get their files from nmprof, whatever they can reach.
  RecordingBroker broker;
  if (broker.start(staging.fd(), &error)) {
    agent.broker_fd = broker.command_end();
    agent.broker_inode = broker.command_end_inode();
  } else {
    std::cerr << "nmprof: warning: " << error << "; processes that drop root, chroot or use a /tmp of their own may "
              << "lose their recording\n";
  }

  time_t started = time(nullptr);
  StagedRecordings staged(staging);
  std::optional<RecordingLoop> loop;
  if (options.loop.seconds) {
    if (uploader) uploader->keep_newest_chunks(options.loop.keep);
    loop.emplace(LoopSettings{options.loop.seconds, options.output, options.loop.keep, chunk_limit, options.keep_jfr,
                              options.quiet, options.top, options.fail_on_live, options.confidence, options.command[0]},
                 staged, wall_clock_nanos(), uploader.get());
    loop->start();
  }
  ChildExit child;
  Environment env = {{"LD_PRELOAD", appended("LD_PRELOAD", agent_path)},
                     {kOptionsVariable, format_agent_options(agent)}};
  ProfileSignals signals;  // until the profile is written
  auto started_command = [&loop](long pid) {
    if (loop) loop->command_started(pid);
  };
  if (!run_child(program, options.command, env, signals, &child, &error, started_command)) {
    loop.reset();
    broker.stop();
    staging.remove();
    return fail(kExitCannotRun, error);
  }
  broker.close_command_end();
  std::vector<SurvivingProcess> survivors = surviving_processes(broker.holders());
  int status = loop ? finish_chunks(options, *loop, staging, survivors, child)
                    : write_profile(options, staging, survivors, broker.execs(), child, started, uploader.get());
  broker.stop();
  if (uploader) uploader->finish(signals.profile_written());
  signals.end_by_held_signal();
  return status;
}

}  // namespace nmprof::cli
