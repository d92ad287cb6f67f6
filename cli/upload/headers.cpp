#include "cli/upload/headers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "attach/fd_io.h"

namespace nmprof::upload {
namespace {

constexpr off_t kMaxFileBytes = 64 * 1024;  // headers, not a profile

// RFC 9110's token characters.
bool token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool parse_headers(std::string_view text, const std::string& source, std::vector<Header>* headers, std::string* error) {
  // nmprof sets these itself: another value would make the body unreadable.
  static constexpr std::string_view kOwn[] = {"Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding",
                                              "Expect"};
  size_t number = 0;
  while (!text.empty()) {
    number++;
    size_t end = text.find('\n');
    std::string_view line = trimmed(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&](const std::string& why) {
      *error = source + ", line " + std::to_string(number) + ": " + why;
      return false;
    };
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return bad("not a header ('Name: value')");
    std::string_view name = trimmed(line.substr(0, colon)), value = trimmed(line.substr(colon + 1));
    if (name.empty()) return bad("a header without a name");
    for (char c : name)
      // Not shown: a line missing its ':' after the name ("Authorization Bearer a:b") has the secret in it.
      if (!token_char(c)) return bad("what comes before ':' is not a header name (letters, digits, !#$%&'*+-.^_`|~)");
    for (unsigned char c : value)
      if ((c < ' ' && c != '\t') || c == 0x7f)
        return bad("the value of " + std::string(name) + " has a control character");
    for (std::string_view own : kOwn)
      if (same_name(name, own)) return bad(std::string(own) + " is set by nmprof");
    headers->push_back({std::string(name), std::string(value)});
  }
  return true;
}

bool load_headers(const std::string& file, std::vector<Header>* headers, std::string* error) {
  if (const char* env = getenv(kHeadersVariable); env && *env)
    if (!parse_headers(env, kHeadersVariable, headers, error)) return false;
  if (file.empty()) return true;
  attach::UniqueFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0) {
    *error = "--upload-header-file: cannot read " + file + ": " + strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "--upload-header-file: " + file + " is not a regular file";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    *error = "--upload-header-file: " + file + " has mode " + mode +
             ": others may read it; it must be the owner's alone (chmod 600 " + file + ")";
    return false;
  }
  if (st.st_size > kMaxFileBytes) {
    *error = "--upload-header-file: " + file + " is larger than 64 KiB: not a file of headers";
    return false;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = pread(fd.get(), text.data(), text.size(), 0);
  if (n < 0) {
    *error = "--upload-header-file: cannot read " + file + ": " + strerror(errno);
    return false;
  }
  text.resize(static_cast<size_t>(n));
  return parse_headers(text, file, headers, error);
}

}  // namespace nmprof::upload
