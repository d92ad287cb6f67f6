// How nmprof sends an upload: one HTTP POST, by libcurl (TLS, proxies from
// http_proxy/https_proxy, HTTP/2, timeouts), which nmprof loads with dlopen the
// first time an upload is asked for, so that nmprof itself does not depend on it.
// HttpTransport is the seam the delivery queue's tests replace.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/upload/headers.h"

namespace nmprof::upload {

struct HttpRequest {
  std::string url;
  std::string content_type;
  std::string content_encoding;  // "" or "gzip"
  std::string body;
};

struct HttpResult {
  enum class Kind {
    Response,     // the server answered with `status`
    Unreachable,  // no answer: no connection, reset, closed early, stalled (worth a retry)
    Tls,          // the TLS handshake or the certificate failed (a retry would fail alike)
    Failed,       // anything else that a retry cannot mend
    Aborted,      // abandoned on request (the flush at exit ran out of time)
  };
  Kind kind = Kind::Failed;
  long status = 0;
  std::optional<double> retry_after;  // seconds, from a Retry-After header
  std::string detail;                 // why it failed, or what the server said (server_message)
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // POSTs `request` and waits for the answer; gives up with Kind::Aborted soon after
  // `abort` becomes true.
  virtual HttpResult post(const HttpRequest& request, const std::atomic<bool>& abort) = 0;
};

// What a server's error response says, as one short line: the "message" of a JSON
// error body (Pyroscope's), else the body's first line, cut at 200 bytes; a body
// that is not UTF-8 text is not shown.
std::string server_message(const std::string& body);

// Loads libcurl.so.4 (once) and returns a transport that sends `headers` and
// `user_agent` with every request; nullptr with a one-line *error when libcurl cannot
// be loaded or is too old. Takes CA certificates from CURL_CA_BUNDLE when it is set,
// as the curl tool does.
std::unique_ptr<HttpTransport> curl_transport(const std::vector<Header>& headers, const std::string& user_agent,
                                              std::string* error);

}  // namespace nmprof::upload
