// nmprof: a native-memory allocation profiler. Subcommands: run, report, attach.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/attach/attach_command.h"
#include "cli/exit_codes.h"
#include "cli/options/count_check.h"
#include "cli/options/did_you_mean.h"
#include "cli/options/path_check.h"
#include "cli/options/report_view_options.h"
#include "cli/options/shell_completion.h"
#include "cli/report/report_command.h"
#include "cli/run/run_command.h"
#include "cli/run/seccomp_probe.h"
#include "cli/signals.h"
#include "formats/text/utf8.h"
#include "protocol/agent_options.h"

namespace {

// An option taking one of a few words; --help lists them as "a|b|c" and a wrong one
// is named in one line.
template <class Target, class Choices>
CLI::Option* add_choice(CLI::App* command, const std::string& name, Target& target, const Choices& choices,
                        const std::string& help) {
  std::string names;
  for (const auto& [word, value] : choices) names += (names.empty() ? "" : "|") + std::string(word);
  auto set = [&target, choices, name, names](const std::string& given) {
    for (const auto& [word, value] : choices) {
      if (given == word) {
        target = value;
        return;
      }
    }
    throw CLI::ValidationError(name, "'" + given + "' is not one of " + names);
  };
  return command->add_option_function<std::string>(name, set, help)->type_name(names);
}

void add_report_command(CLI::App& app, nmprof::report::ReportOptions& options) {
  using nmprof::report::ReportOptions;
  CLI::App* report = app.add_subcommand("report", "Summarize a recording (nmprof's or another profiler's JFR file)");
  report
      ->add_option("file", options.files,
                   "The .jfr file; or the chunk files of a looping recording (run --loop), read as one in time order")
      ->required()
      ->check(nmprof::cli::path_check())
      ->type_name("FILE...");
  report->add_option("-o,--output", options.output,
                     "Write to this file (default: standard output); its extension chooses the format: .pb.gz pprof, "
                     ".collapsed, .html, .json, .txt")
      ->type_name("FILE")
      ->check(nmprof::cli::path_check());
  add_choice(report, "--format", options.format, nmprof::report::report_formats(),
             "What to write: a report, a pprof heap profile, collapsed stacks, a flame graph page");
  report->add_option("--top", options.top, "Stacks and functions shown")->default_val(options.top)
      ->check(nmprof::cli::count_check(1, nmprof::cli::kMaxTop, "stacks"))
      ->type_name("N");
  report
      ->add_option_function<std::string>(
          "--by",
          [&options](const std::string& text) {
            if (auto error = nmprof::report::parse_by(text, options)) throw CLI::ValidationError(*error);
          },
          "Rank by whole stacks, functions, or a context value (attribute:NAME is a declared context attribute)")
      ->type_name("stack|function|span|local-root-span|attribute:NAME")
      ->default_str("stack");
  report
      ->add_option_function<std::vector<std::string>>(
          "--tag",
          [&options](const std::vector<std::string>& texts) {
            for (const auto& text : texts) {
              nmprof::Tag tag;
              if (auto error = nmprof::parse_tag(text, &tag)) throw CLI::ValidationError("--tag: " + *error);
              options.filters.push_back({tag.first, tag.second});
            }
          },
          "Only samples with KEY=VALUE: a context attribute, spanId (span_id), localRootSpanId (local_root_span_id) "
          "or a static tag (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_choice(report, "--value", options.value,
             std::vector<std::pair<const char*, nmprof::report::Value>>{{"bytes", nmprof::report::Value::Bytes},
                                                                        {"count", nmprof::report::Value::Count}},
             "Value of collapsed stacks: estimated bytes or allocations")
      ->default_str("bytes");
  report->add_option("--diff", options.diff_base, "Compare with an earlier recording: what grew since BASE")
      ->type_name("BASE")
      ->check(nmprof::cli::path_check());
  report->add_flag("-q,--quiet", options.quiet, "Show no progress while reading a large recording");
  report->add_flag("--live", options.live, "Show what is still allocated at the end instead of what was allocated");
  report->add_flag("--peak", options.peak,
                   "Show what was live at the moment of the highest estimated live total (the peak) instead of "
                   "what was allocated");
  nmprof::cli::add_report_view_options(report, options);
  report->footer(
      "Examples:\n"
      "  nmprof report app.jfr --live\n"
      "  nmprof report app.jfr --peak\n"
      "  nmprof report app.jfr -o app.pb.gz && go tool pprof -top app.pb.gz\n"
      "  nmprof report app.jfr --format collapsed | flamegraph.pl > app.svg\n"
      "  nmprof report app.jfr -o app.html      (a flame graph page with a chart of memory over the run)\n"
      "  nmprof report after.jfr --diff before.jfr --live\n"
      "  nmprof report app.jfr --by function --sort total --include '^parse'\n"
      "  nmprof report after.jfr --diff before.jfr --fail-on-growth 16m      (a CI gate: exit status 3)");
}

int usage_error(const std::string& message) {
  std::cerr << "nmprof: " << message << "\nRun 'nmprof --help' for usage.\n";
  return nmprof::cli::kExitUsage;
}

// An option the command does not have is named, with the one it was probably meant
// to be; other extra arguments as CLI11 lists them.
std::string unexpected_arguments_message(const CLI::App& app, const CLI::ExtrasError& e) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const std::string& arg : command->remaining()) {
      if (arg.size() > 1 && arg[0] == '-') return nmprof::cli::unknown_option_message(*command, arg);
    }
  }
  return e.what();
}

// CLI11 reads "--name=" (nothing after '=') as "--name" and takes the next argument for
// its value (`run --output= -- cmd` wrote a file named "--"): nmprof's own part of the
// arguments, up to "--", gets such a one split into the name and an empty value, which
// the option's check refuses.
void split_empty_values(std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size() && args[i] != "--"; i++) {
    if (args[i].size() > 3 && args[i].starts_with("--") && args[i].back() == '=' &&
        args[i].find('=') == args[i].size() - 1) {
      args[i].pop_back();
      args.insert(args.begin() + static_cast<long>(i) + 1, "");
      i++;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == nmprof::cli::kSeccompProbeArgument)
    return nmprof::cli::seccomp_probe_main(argc, argv);
  nmprof::cli::survive_failed_writes();
  CLI::App app{"nmprof: who allocates native memory, and who still holds it", "nmprof"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nmprof " NMPROF_VERSION);
  nmprof::cli::RunOptions run;
  nmprof::cli::add_run_command(app, run);
  nmprof::report::ReportOptions report;
  add_report_command(app, report);
  nmprof::cli::AttachOptions attach;
  nmprof::cli::add_attach_command(app, attach);
  std::string shell;
  nmprof::cli::add_completion_command(app, shell);
  app.footer("Run 'nmprof <command> --help' for the options of a command. See man nmprof.");
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::string_view kCommands[] = {"run", "report", "attach", "completion", "-h", "--help", "--version"};
  if (!args.empty() && std::find(std::begin(kCommands), std::end(kCommands), args[0]) == std::end(kCommands)) {
    std::string meant = nmprof::cli::closest_name(args[0], {"run", "report", "attach", "completion"});
    return usage_error("unknown command '" + nmprof::text::escape_controls(args[0]) + "'" + (meant.empty() ? "" : "; did you mean " + meant + "?") +
                       " (commands: run, report, attach, completion)");
  }
  // Everything after the profiled program's name is its own: hand CLI11 only nmprof's
  // part, and the program after an explicit "--".
  if (!args.empty() && args[0] == "run") {
    std::string error;
    size_t command = nmprof::cli::split_run_arguments(*app.get_subcommand("run"), args, 1, &error);
    if (!error.empty()) return usage_error(error);
    if (command < args.size() && args[command] != "--") args.insert(args.begin() + static_cast<long>(command), "--");
  } else if (!args.empty() && args[0][0] != '-') {
    // Before CLI11, which would take the option's value for an argument and complain about that.
    const CLI::App& command = *app.get_subcommand(args[0]);
    std::string unknown = nmprof::cli::unknown_long_option(command, args, 1);
    if (!unknown.empty()) return usage_error(nmprof::cli::unknown_option_message(command, unknown));
  }
  split_empty_values(args);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    return usage_error(unexpected_arguments_message(app, e));
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }
  if (app.got_subcommand("run")) return nmprof::cli::run_command(run);
  if (app.got_subcommand("attach")) return nmprof::cli::attach_command(attach);
  if (app.got_subcommand("completion")) {
    std::cout << (shell == "zsh" ? nmprof::cli::zsh_completion(app) : nmprof::cli::bash_completion(app));
    return 0;
  }
  return nmprof::report::run_report(report, std::cout, std::cerr);
}
