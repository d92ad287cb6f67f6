#include "cli/upload/upload_settings.h"

#include "protocol/agent_options.h"

namespace nmprof::upload {

std::optional<UploadSettings> upload_settings(const cli::UploadOptions& options, const std::vector<std::string>& tags,
                                              std::string* error) {
  if (std::string orphan = options.orphan(); !orphan.empty()) {
    *error = orphan + " goes with --upload URL or --otlp URL";
    return std::nullopt;
  }
  UploadSettings settings;
  settings.timeout = options.timeout;
  if (!options.app.empty()) {
    if (auto bad = check_app_name(options.app)) {
      *error = *bad;
      return std::nullopt;
    }
    settings.app = options.app;
  }
  if (!options.pyroscope.empty()) {
    auto url = parse_url(options.pyroscope, "--upload", error);
    if (!url) return std::nullopt;
    for (const std::string& text : tags) {
      Tag tag;
      if (parse_tag(text, &tag)) continue;  // the recording's options say it (to_agent_options)
      if (auto bad = check_label(tag.first, tag.second)) {
        *error = *bad;
        return std::nullopt;
      }
    }
    settings.pyroscope = PyroscopeTarget{*url, {}, {}, PyroscopeFormat::Pprof};
    if (options.format == "jfr") settings.pyroscope->format = PyroscopeFormat::Jfr;
  } else if (options.format) {
    *error = "--upload-format is what goes to Pyroscope: it goes with --upload URL";
    return std::nullopt;
  }
  if (!options.otlp.empty()) {
    settings.otlp = parse_url(options.otlp, "--otlp", error);
    if (!settings.otlp) return std::nullopt;
    if (settings.otlp->path.empty()) settings.otlp->path = kOtlpProfilesPath;
  }
  if (!load_headers(options.header_file, &settings.headers, error)) return std::nullopt;
  return settings;
}

}  // namespace nmprof::upload
