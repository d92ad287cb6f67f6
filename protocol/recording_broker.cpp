#include "protocol/recording_broker.h"

#include <fcntl.h>

namespace nmprof {
namespace {

bool all_digits(std::string_view text) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

bool broker_may_open(std::string_view name, int flags) {
  constexpr std::string_view kSuffix = ".jfr";
  if (!name.ends_with(kSuffix)) return false;
  std::string_view stem = name.substr(0, name.size() - kSuffix.size());
  size_t dot = stem.find('.');
  bool named = dot == std::string_view::npos ? all_digits(stem)
                                             : all_digits(stem.substr(0, dot)) && all_digits(stem.substr(dot + 1));
  int access = flags & O_ACCMODE;
  bool allowed =
      (flags & ~(O_ACCMODE | O_CREAT)) == 0 && (access == O_RDONLY ? (flags & O_CREAT) == 0 : access == O_WRONLY);
  return named && allowed;
}

}  // namespace nmprof
