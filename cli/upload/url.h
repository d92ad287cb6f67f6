// The URLs nmprof sends profiles to (--upload, --otlp): http:// or https://, a host,
// an optional port and path. Credentials in the URL (user:password@) are refused: a
// command line shows in `ps`, so secrets come from a header file or the environment
// (headers.h). So are a query and a fragment, which nmprof's own query would clash with.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nmprof::upload {

struct Url {
  std::string scheme;     // "http" or "https"
  std::string authority;  // host[:port], as given
  std::string path;       // "" or "/prefix", without a trailing '/'

  // scheme://authority/path + suffix ("/ingest").
  std::string with_path(std::string_view suffix) const;
  std::string text() const { return with_path(""); }
};

// The URL of an option (`option` names it in *error: "--upload: ..."), or nullopt
// with a one-line *error.
std::optional<Url> parse_url(const std::string& text, const std::string& option, std::string* error);

// RFC 3986: every byte but the unreserved ones (A-Z a-z 0-9 - . _ ~) as %XX, for a
// query parameter's value.
std::string percent_encoded(std::string_view text);

}  // namespace nmprof::upload
