// The options that send the profile to a profiling backend, the same for `run` and
// `attach` (one shot and stop): --upload (Pyroscope), --otlp (an OpenTelemetry
// collector), --app, --upload-format, --upload-timeout and --upload-header-file.
// --upload-header is refused: a header on the command line shows in `ps`.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace nmprof::cli {

struct UploadOptions {
  std::string pyroscope;              // --upload URL
  std::string otlp;                   // --otlp URL
  std::string app;                    // --app NAME; empty: the program's name
  std::optional<std::string> format;  // --upload-format pprof|jfr (default pprof)
  double timeout = 10;                // --upload-timeout SECONDS
  bool timeout_given = false;
  std::string header_file;  // --upload-header-file FILE

  bool wanted() const { return !pyroscope.empty() || !otlp.empty(); }
  // An option that only means something with --upload or --otlp, when given without
  // them ("--app"); empty when none is.
  std::string orphan() const {
    if (wanted()) return "";
    if (!app.empty()) return "--app";
    if (format) return "--upload-format";
    if (timeout_given) return "--upload-timeout";
    if (!header_file.empty()) return "--upload-header-file";
    return "";
  }
};

void add_upload_options(CLI::App* command, UploadOptions& options);

}  // namespace nmprof::cli
