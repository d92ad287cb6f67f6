#include "cli/report/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

namespace nmprof::report {

size_t terminal_width(int fd) {
  size_t width = 0;
  if (const char* columns = getenv("COLUMNS"); columns && *columns) {
    std::string_view text(columns);
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), width);
    if (error != std::errc() || end != text.data() + text.size()) width = 0;
  }
  winsize size{};
  if (width == 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &size) == 0) width = size.ws_col;
  if (width == 0) return kDefaultTextWidth;
  return std::clamp(width, kMinTextWidth, kWideTextWidth);
}

bool terminal_colour(int fd) {
  const char* no_colour = getenv("NO_COLOR");  // https://no-color.org: set and not empty
  if (no_colour && *no_colour) return false;
  const char* term = getenv("TERM");
  if (term && std::string_view(term) == "dumb") return false;
  return isatty(fd);
}

}  // namespace nmprof::report
