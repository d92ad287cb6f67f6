// The upload options as checked and resolved before anything is recorded, so that a
// bad URL, application name, label or header file is one line and a non-zero exit
// at the start instead of a profile that cannot be sent at the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/options/upload_options.h"
#include "cli/upload/headers.h"
#include "cli/upload/pyroscope_request.h"
#include "cli/upload/url.h"

namespace nmprof::upload {

struct UploadSettings {
  std::optional<PyroscopeTarget> pyroscope;  // its labels: each chunk's recording's tags
  std::optional<Url> otlp;                   // the profiles endpoint itself
  std::string app;                           // empty: each chunk's program
  double timeout = 10;                       // seconds of the flush at the end
  std::vector<Header> headers;
};

// The path OTLP/HTTP exporters add to a collector's base URL for profiles.
inline constexpr const char* kOtlpProfilesPath = "/v1development/profiles";

// The settings of `options`, whose recording has the static tags `tags` (KEY=VALUE);
// nullopt with a one-line *error.
std::optional<UploadSettings> upload_settings(const cli::UploadOptions& options, const std::vector<std::string>& tags,
                                              std::string* error);

}  // namespace nmprof::upload
