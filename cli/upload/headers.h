// The HTTP headers that go with every upload (Authorization, X-Scope-OrgID ...).
// Never from the command line, where `ps` shows them to every user: from the
// environment (NMPROF_UPLOAD_HEADERS) and from a file only its owner may read
// (--upload-header-file). One "Name: value" per line; blank lines and lines that
// start with '#' are skipped. Messages name a line and a header, never a value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nmprof::upload {

inline constexpr const char* kHeadersVariable = "NMPROF_UPLOAD_HEADERS";

struct Header {
  std::string name;
  std::string value;
};

// Appends the headers of `text` (from `source`, for messages) to *headers; false with
// a one-line *error on a line that is not a header nmprof may send.
bool parse_headers(std::string_view text, const std::string& source, std::vector<Header>* headers, std::string* error);

// The headers of NMPROF_UPLOAD_HEADERS, then of `file` (none when empty): a regular
// file that neither its group nor others may read or write (chmod 600).
bool load_headers(const std::string& file, std::vector<Header>* headers, std::string* error);

}  // namespace nmprof::upload
