// nmprof: a native-memory allocation profiler. Subcommands: run, report.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/exit_codes.h"
#include "cli/report/report_command.h"
#include "cli/run_command.h"

namespace {

void add_report_command(CLI::App& app, nmprof::report::ReportOptions& options) {
  using nmprof::report::ReportOptions;
  CLI::App* report = app.add_subcommand("report", "Summarize a recording (nmprof's or another profiler's JFR file)");
  report->add_option("file", options.file, "The .jfr file")->required();
  report->add_option("--top", options.top, "Stacks and functions shown")->default_val(options.top);
  report->add_option("--by", options.by, "Rank by whole stacks or by function")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ReportOptions::By>{{"stack", ReportOptions::By::Stack},
                                                   {"function", ReportOptions::By::Function}}))
      ->default_str("stack");
  report->add_option("--format", options.format, "text, or json for scripts")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ReportOptions::Format>{{"text", ReportOptions::Format::Text},
                                                       {"json", ReportOptions::Format::Json}}))
      ->default_str("text");
  report->add_flag("--live", options.live, "Show what is still allocated at the end instead of what was allocated");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nmprof: who allocates native memory, and who still holds it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nmprof " NMPROF_VERSION);
  nmprof::cli::RunOptions run;
  nmprof::cli::add_run_command(app, run);
  nmprof::report::ReportOptions report;
  add_report_command(app, report);
  app.footer("Run 'nmprof <command> --help' for the options of a command. See man nmprof.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "nmprof: " << e.what() << "\nRun 'nmprof --help' for usage.\n";
    return nmprof::cli::kExitUsage;
  }
  if (app.got_subcommand("run")) return nmprof::cli::run_command(run);
  return nmprof::report::run_report(report, std::cout, std::cerr);
}
