#include "cli/upload/http_client.h"

#define CURL_DISABLE_TYPECHECK  // the functions are called through pointers from dlsym
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <mutex>

#include "formats/text/utf8.h"

namespace nmprof::upload {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";
constexpr unsigned kOldestVersion = 0x074400;  // 7.68.0: curl_multi_poll
constexpr size_t kMaxResponseBytes = 64 * 1024;
constexpr size_t kShownBytes = 200;  // of a server's message
constexpr long kConnectTimeoutMs = 10'000;
constexpr long kStalledSeconds = 60;  // a server that takes nothing for this long is retried
constexpr int kPollMs = 50;           // how soon an abort is seen

// The functions of libcurl nmprof calls, found with dlsym.
struct Curl {
  decltype(&curl_global_init) global_init;
  decltype(&curl_version_info) version_info;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
  decltype(&curl_multi_init) multi_init;
  decltype(&curl_multi_add_handle) multi_add_handle;
  decltype(&curl_multi_remove_handle) multi_remove_handle;
  decltype(&curl_multi_perform) multi_perform;
  decltype(&curl_multi_poll) multi_poll;
  decltype(&curl_multi_info_read) multi_info_read;
  decltype(&curl_multi_cleanup) multi_cleanup;
};

template <class F>
bool find(void* library, const char* name, F* function) {
  *function = reinterpret_cast<F>(dlsym(library, name));
  return *function != nullptr;
}

// Loaded once, and never unloaded (its TLS library keeps state of its own).
const Curl* load_curl(std::string* error) {
  static Curl curl;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      failure = std::string("uploads need libcurl, which nmprof could not load (") + (why ? why : kLibrary) +
                "): install it (Debian, Ubuntu: apt install libcurl4; Fedora, RHEL: dnf install libcurl)";
      return;
    }
    bool found = find(library, "curl_global_init", &curl.global_init) &&
                 find(library, "curl_version_info", &curl.version_info) &&
                 find(library, "curl_easy_init", &curl.easy_init) &&
                 find(library, "curl_easy_setopt", &curl.easy_setopt) &&
                 find(library, "curl_easy_getinfo", &curl.easy_getinfo) &&
                 find(library, "curl_easy_cleanup", &curl.easy_cleanup) &&
                 find(library, "curl_easy_strerror", &curl.easy_strerror) &&
                 find(library, "curl_slist_append", &curl.slist_append) &&
                 find(library, "curl_slist_free_all", &curl.slist_free_all) &&
                 find(library, "curl_multi_init", &curl.multi_init) &&
                 find(library, "curl_multi_add_handle", &curl.multi_add_handle) &&
                 find(library, "curl_multi_remove_handle", &curl.multi_remove_handle) &&
                 find(library, "curl_multi_perform", &curl.multi_perform) &&
                 find(library, "curl_multi_poll", &curl.multi_poll) &&
                 find(library, "curl_multi_info_read", &curl.multi_info_read) &&
                 find(library, "curl_multi_cleanup", &curl.multi_cleanup);
    const curl_version_info_data* version = found ? curl.version_info(CURLVERSION_NOW) : nullptr;
    if (!version || version->version_num < kOldestVersion) {
      failure = std::string("the libcurl nmprof found (") + (version ? version->version : kLibrary) +
                ") is too old for uploads: they need 7.68 or later";
      return;
    }
    // Before any thread of nmprof's uses it, as libcurl asks.
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) failure = "libcurl could not initialize itself";
  });
  if (!failure.empty()) {
    *error = failure;
    return nullptr;
  }
  return &curl;
}

bool tls_failure(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED: return true;
    default: return false;
  }
}

// Failures that no retry mends (besides TLS ones).
bool lasting_failure(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_FUNCTION_NOT_FOUND:
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR: return true;
    default: return false;
  }
}

size_t keep_response(char* data, size_t size, size_t count, void* response) {
  auto* body = static_cast<std::string*>(response);
  size_t bytes = size * count;
  body->append(data, std::min(bytes, kMaxResponseBytes - std::min(kMaxResponseBytes, body->size())));
  return bytes;  // the rest is read and dropped, so that the transfer completes
}

class CurlTransport : public HttpTransport {
 public:
  CurlTransport(const Curl& curl, std::vector<std::string> headers, std::string user_agent)
      : curl_(curl), headers_(std::move(headers)), user_agent_(std::move(user_agent)) {
    multi_ = curl_.multi_init();  // keeps connections open from one post to the next
  }
  ~CurlTransport() override {
    if (multi_) curl_.multi_cleanup(multi_);
  }

  HttpResult post(const HttpRequest& request, const std::atomic<bool>& abort) override {
    HttpResult result;
    CURL* easy = multi_ ? curl_.easy_init() : nullptr;
    if (!easy) {
      result.detail = "libcurl could not make a request (out of memory?)";
      return result;
    }
    curl_slist* headers = nullptr;
    for (const std::string& header : headers_) headers = curl_.slist_append(headers, header.c_str());
    headers = curl_.slist_append(headers, ("Content-Type: " + request.content_type).c_str());
    if (!request.content_encoding.empty())
      headers = curl_.slist_append(headers, ("Content-Encoding: " + request.content_encoding).c_str());
    headers = curl_.slist_append(headers, "Expect:");  // no 100-continue round trip
    std::string response;
    char error[CURL_ERROR_SIZE] = "";
    curl_.easy_setopt(easy, CURLOPT_URL, request.url.c_str());
    curl_.easy_setopt(easy, CURLOPT_POST, 1L);
    curl_.easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    curl_.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_.easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_.easy_setopt(easy, CURLOPT_USERAGENT, user_agent_.c_str());
    curl_.easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_.easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_.easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, kStalledSeconds);
    curl_.easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_.easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep_response);
    curl_.easy_setopt(easy, CURLOPT_WRITEDATA, &response);
    curl_.easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
    if (const char* ca = getenv("CURL_CA_BUNDLE"); ca && *ca) curl_.easy_setopt(easy, CURLOPT_CAINFO, ca);

    curl_.multi_add_handle(multi_, easy);
    CURLcode code = CURLE_OK;
    bool done = false, aborted = false;
    while (!done) {
      int running = 0;
      if (curl_.multi_perform(multi_, &running) != CURLM_OK) {
        code = CURLE_OUT_OF_MEMORY;
        break;
      }
      int queued = 0;
      while (CURLMsg* message = curl_.multi_info_read(multi_, &queued)) {
        if (message->msg == CURLMSG_DONE && message->easy_handle == easy) {
          code = message->data.result;
          done = true;
        }
      }
      if (done) break;
      if (abort.load()) {
        aborted = true;
        break;
      }
      curl_.multi_poll(multi_, nullptr, 0, kPollMs, nullptr);
    }
    if (aborted) {
      result.kind = HttpResult::Kind::Aborted;
      result.detail = "abandoned";
    } else if (code == CURLE_OK) {
      result.kind = HttpResult::Kind::Response;
      curl_.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &result.status);
      curl_off_t retry_after = 0;  // 0 also when the answer has no Retry-After
      if (curl_.easy_getinfo(easy, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0 &&
          (result.status == 429 || result.status >= 500))
        result.retry_after = static_cast<double>(retry_after);
      char* location = nullptr;  // an http:// server that sends https:// clients on, say
      if (result.status >= 300 && result.status < 400 &&
          curl_.easy_getinfo(easy, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location)
        result.detail = "redirected to " + text::escape_controls(location) + ", which nmprof does not follow";
      else if (result.status < 200 || result.status >= 300)
        result.detail = server_message(response);
    } else {
      result.kind = tls_failure(code)       ? HttpResult::Kind::Tls
                    : lasting_failure(code) ? HttpResult::Kind::Failed
                                            : HttpResult::Kind::Unreachable;
      result.detail = text::escape_controls(*error ? error : curl_.easy_strerror(code));
      // OpenSSL's words for an answer that is no TLS at all.
      if (result.kind == HttpResult::Kind::Tls && result.detail.find("wrong version number") != std::string::npos)
        result.detail += " (the server does not speak TLS: an http:// URL?)";
    }
    curl_.multi_remove_handle(multi_, easy);
    curl_.easy_cleanup(easy);
    curl_.slist_free_all(headers);
    return result;
  }

 private:
  const Curl& curl_;
  CURLM* multi_ = nullptr;
  std::vector<std::string> headers_;  // "Name: value"
  std::string user_agent_;
};

}  // namespace

std::string server_message(const std::string& body) {
  std::string_view text = body;
  // {"code":"invalid_argument","message":"..."}: the message, its escapes left as they are.
  if (size_t key = text.find("\"message\""); text.starts_with('{') && key != std::string_view::npos) {
    size_t open = text.find('"', text.find(':', key) + 1);
    if (open != std::string_view::npos) {
      size_t close = open + 1;
      while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
      text = text.substr(open + 1, std::min(close, text.size()) - open - 1);
    }
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
  text = text.substr(0, text.find_first_of("\r\n"));
  std::string_view shown = text.substr(0, kShownBytes);
  // Not cut inside a character.
  if (shown.size() < text.size())
    while (!shown.empty() && (static_cast<unsigned char>(text[shown.size()]) & 0xc0) == 0x80) shown.remove_suffix(1);
  // A binary answer (a proxy's, an image, a protobuf) would be a line of escapes.
  if (shown.find('\0') != std::string_view::npos || !text::decode_utf8(shown)) return "a body that is not text";
  std::string line = text::escape_controls(shown);
  return shown.size() < text.size() ? line + "..." : line;
}

std::unique_ptr<HttpTransport> curl_transport(const std::vector<Header>& headers, const std::string& user_agent,
                                              std::string* error) {
  const Curl* curl = load_curl(error);
  if (!curl) return nullptr;
  std::vector<std::string> lines;
  // "Name;" is libcurl's spelling of a header with an empty value ("Name:" would remove it).
  for (const Header& header : headers)
    lines.push_back(header.value.empty() ? header.name + ";" : header.name + ": " + header.value);
  return std::make_unique<CurlTransport>(*curl, std::move(lines), user_agent);
}

}  // namespace nmprof::upload
