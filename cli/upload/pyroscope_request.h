// A profile as Pyroscope's HTTP ingest API takes it (grafana/pyroscope:
// pkg/ingester/pyroscope/ingest_handler.go):
//   POST URL/ingest?name=APP{k=v,...}&from=S&until=S&format=pprof|jfr&units=bytes
//        &aggregationType=sum&spyName=nmprof
// pprof: the gzipped profile is the body (format=pprof takes the body as it is).
// JFR: a multipart form whose file field "jfr" holds the (gzipped) recording, as
// Pyroscope's Java agent sends it (pkg/og/convert/jfr/profile.go: loadJFRFromForm).
// The server reads the sample types from the profile itself; units and
// aggregationType are what its older versions asked for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "cli/upload/http_client.h"
#include "cli/upload/url.h"

namespace nmprof::upload {

enum class PyroscopeFormat { Pprof, Jfr };

struct PyroscopeTarget {
  Url url;  // the server's base URL
  std::string app;
  std::map<std::string, std::string> labels;  // the recording's tags
  PyroscopeFormat format = PyroscopeFormat::Pprof;
};

// Whether Pyroscope takes `app` as an application name (letters, digits, _ . - /),
// or a one-line reason it would not.
std::optional<std::string> check_app_name(const std::string& app);
// Whether Pyroscope's name parser (api/model/labelset) takes the label: a name of
// letters, digits, _ and . not starting with "__" (reserved), a value without ',',
// '}' or spaces at its ends (its syntax has no escapes); or a one-line reason.
std::optional<std::string> check_label(const std::string& key, const std::string& value);
// `name` made a valid application name: other characters become '_' ("nmprof" when empty).
std::string app_name_from(const std::string& name);

// Times are seconds since the epoch (from rounded down, until up).
HttpRequest pyroscope_request(const PyroscopeTarget& target, std::string payload, int64_t from_nanos,
                              int64_t until_nanos);

// The multipart form of a JFR upload, with `boundary` (which must not occur in `jfr`).
std::string jfr_form(const std::string& jfr, const std::string& boundary);

}  // namespace nmprof::upload
