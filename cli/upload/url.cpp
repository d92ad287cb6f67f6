#include "cli/upload/url.h"

namespace nmprof::upload {
namespace {

// ASCII only, whatever the locale.
bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool hex_digit(char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool refuse(std::string* error, const std::string& option, const std::string& text, const std::string& why) {
  *error = option + ": '" + text + "' " + why;
  return false;
}

// A host name, an IPv4 address or a bracketed IPv6 one, then an optional port.
bool valid_authority(std::string_view authority) {
  std::string_view host = authority, port;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : authority.substr(1, close - 1))
      if (!hex_digit(c) && c != ':' && c != '.') return false;
    host = {};
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return false;
    port = rest.empty() ? rest : rest.substr(1);
    if (!rest.empty() && port.empty()) return false;
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return false;
  }
  if (!authority.starts_with('[')) {
    if (host.empty()) return false;
    for (char c : host)
      if (!alnum(c) && c != '-' && c != '.' && c != '_') return false;
  }
  if (port.size() > 5) return false;
  unsigned number = 0;
  for (char c : port) {
    if (!digit(c)) return false;
    number = number * 10 + static_cast<unsigned>(c - '0');
  }
  return port.empty() || (number >= 1 && number <= 65535);
}

}  // namespace

std::string Url::with_path(std::string_view suffix) const {
  return scheme + "://" + authority + path + std::string(suffix);
}

std::optional<Url> parse_url(const std::string& text, const std::string& option, std::string* error) {
  Url url;
  size_t colon = text.find("://");
  if (colon == std::string::npos) {
    refuse(error, option, text, "is not a URL (e.g. http://localhost:4040)");
    return std::nullopt;
  }
  url.scheme = text.substr(0, colon);
  for (char& c : url.scheme) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  if (url.scheme != "http" && url.scheme != "https") {
    refuse(error, option, text, "is not an http:// or https:// URL");
    return std::nullopt;
  }
  std::string rest = text.substr(colon + 3);
  for (unsigned char c : rest) {
    if (c <= ' ' || c >= 0x7f) {
      refuse(error, option, text, "has a space or a character that is not ASCII in it");
      return std::nullopt;
    }
  }
  size_t slash = rest.find('/');
  url.authority = rest.substr(0, slash);
  url.path = slash == std::string::npos ? "" : rest.substr(slash);
  if (url.authority.find('@') != std::string::npos) {
    refuse(error, option, text,
           "holds credentials, which would show in ps: put an Authorization header in NMPROF_UPLOAD_HEADERS or in "
           "a file for --upload-header-file");
    return std::nullopt;
  }
  if (url.path.find_first_of("?#") != std::string::npos || url.authority.find_first_of("?#") != std::string::npos) {
    refuse(error, option, text, "has a query or a fragment; give the server's base URL");
    return std::nullopt;
  }
  if (!valid_authority(url.authority)) {
    refuse(error, option, text, "has no valid host[:port]");
    return std::nullopt;
  }
  while (url.path.ends_with('/')) url.path.pop_back();
  return url;
}

std::string percent_encoded(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (alnum(static_cast<char>(c)) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace nmprof::upload
