#include "cli/options/upload_options.h"

#include "cli/options/path_check.h"
#include "cli/options/seconds_option.h"

namespace nmprof::cli {

constexpr double kMaxUploadTimeout = 3600;

// An empty URL (`--upload "$PYROSCOPE_URL"` with the variable unset) would send
// nothing without a word.
CLI::Validator url_given() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("empty URL") : std::string(); },
                        "");  // --help names the value (URL)
}

void add_upload_options(CLI::App* command, UploadOptions& options) {
  const char* group = "Upload";
  command->add_option("--upload", options.pyroscope, "Send the profile to this Pyroscope server (its base URL)")
      ->type_name("URL")
      ->check(url_given())
      ->group(group);
  command
      ->add_option("--otlp", options.otlp,
                   "Send the profile to this OpenTelemetry collector (OTLP/HTTP; its base URL, or the full "
                   "URL of its profiles endpoint)")
      ->type_name("URL")
      ->check(url_given())
      ->group(group);
  command
      ->add_option("--app", options.app,
                   "The application's name in Pyroscope and OTLP's service.name "
                   "(default: the program's name)")
      ->type_name("NAME")
      ->group(group);
  command->add_option("--upload-format", options.format, "What is sent to Pyroscope: pprof (default) or jfr")
      ->check(CLI::IsMember({"pprof", "jfr"}).description(""))
      ->type_name("pprof|jfr")
      ->group(group);
  add_seconds_option(command, "--upload-timeout", options.timeout, {0.001, kMaxUploadTimeout},
                     "Seconds nmprof waits at its end for uploads to be taken (default 10; at most an hour)")
      ->check(CLI::Validator(  // notes that it was given, for orphan()
          [&options](std::string&) {
            options.timeout_given = true;
            return std::string();
          },
          ""))
      ->group(group);
  command
      ->add_option("--upload-header-file", options.header_file,
                   "HTTP headers for uploads, one 'Name: value' a line, from a file only its owner may read "
                   "(or NMPROF_UPLOAD_HEADERS)")
      ->type_name("FILE")
      ->check(path_check())
      ->group(group);
  // Hidden: it exists only to say why it is refused.
  command
      ->add_option_function<std::string>(
          "--upload-header",
          [](const std::string&) {
            throw CLI::ValidationError("--upload-header",
                                       "not taken on the command line, where ps shows it to every user: put the "
                                       "header in NMPROF_UPLOAD_HEADERS or in a file for --upload-header-file "
                                       "(chmod 600)");
          },
          "")
      ->group("");
}

}  // namespace nmprof::cli
