#include "cli/upload/pyroscope_request.h"

#include <random>

#include "formats/pprof/gzip.h"

namespace nmprof::upload {
namespace {

bool label_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

std::string name_with_labels(const PyroscopeTarget& target) {
  std::string name = target.app;
  if (target.labels.empty()) return name;
  char separator = '{';
  for (const auto& [key, value] : target.labels) {
    name += separator + key + "=" + value;
    separator = ',';
  }
  return name + "}";
}

std::string random_boundary(const std::string& body) {
  std::random_device device;
  std::mt19937_64 random(device());
  for (;;) {
    char text[40];
    snprintf(text, sizeof text, "nmprof-%016llx%08llx", static_cast<unsigned long long>(random()),
             static_cast<unsigned long long>(random() & 0xffffffff));
    if (body.find(text) == std::string::npos) return text;
  }
}

}  // namespace

std::optional<std::string> check_app_name(const std::string& app) {
  if (app.empty()) return "--app: empty application name";
  for (char c : app)
    if (!label_name_char(c) && c != '-' && c != '/')
      return "--app: '" + app + "' has a character Pyroscope does not take in a name (letters, digits, _ . - /)";
  return std::nullopt;
}

std::optional<std::string> check_label(const std::string& key, const std::string& value) {
  for (char c : key)
    if (!label_name_char(c))
      return "--tag " + key + "=...: Pyroscope takes only letters, digits, _ and . in label names";
  if (key.starts_with("__")) return "--tag " + key + "=...: Pyroscope reserves names that start with __";
  if (value.find_first_of(",}") != std::string::npos)
    return "--tag " + key + "=" + value +
           ": Pyroscope's label syntax has no escapes, so a value cannot hold ',' or '}'";
  if (!value.empty() && (value.front() == ' ' || value.back() == ' '))
    return "--tag " + key + "=" + value + ": Pyroscope would drop the spaces at the value's ends";
  return std::nullopt;
}

std::string app_name_from(const std::string& name) {
  std::string app = name;
  for (char& c : app)
    if (!label_name_char(c) && c != '-' && c != '/') c = '_';
  return app.empty() ? "nmprof" : app;
}

std::string jfr_form(const std::string& jfr, const std::string& boundary) {
  return "--" + boundary +
         "\r\n"
         "Content-Disposition: form-data; name=\"jfr\"; filename=\"jfr\"\r\n"
         "Content-Type: application/octet-stream\r\n\r\n" +
         jfr + "\r\n--" + boundary + "--\r\n";
}

HttpRequest pyroscope_request(const PyroscopeTarget& target, std::string payload, int64_t from_nanos,
                              int64_t until_nanos) {
  constexpr int64_t kSecond = 1'000'000'000;
  bool jfr = target.format == PyroscopeFormat::Jfr;
  HttpRequest request;
  request.url = target.url.with_path("/ingest") + "?name=" + percent_encoded(name_with_labels(target)) +
                "&from=" + std::to_string(from_nanos / kSecond) +
                "&until=" + std::to_string((until_nanos + kSecond - 1) / kSecond) +
                "&format=" + (jfr ? "jfr" : "pprof") + "&units=bytes&aggregationType=sum&spyName=nmprof";
  if (jfr) {
    std::string gzipped = pprof::gzip(payload);  // Pyroscope gunzips a field that starts with gzip's magic
    std::string boundary = random_boundary(gzipped);
    request.content_type = "multipart/form-data; boundary=" + boundary;
    request.body = jfr_form(gzipped, boundary);
  } else {
    request.content_type = "application/octet-stream";
    request.body = std::move(payload);
  }
  return request;
}

}  // namespace nmprof::upload
