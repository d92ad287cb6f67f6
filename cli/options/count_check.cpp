#include "cli/options/count_check.h"

#include <charconv>

namespace nmprof::cli {

CLI::Validator count_check(uint64_t min, uint64_t max, const std::string& things, const std::string& note) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        uint64_t value = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size() && value >= min && value <= max) return {};
        return "'" + text + "' is not a number of " + things + " from " + std::to_string(min) + " to " +
               std::to_string(max) + (note.empty() ? "" : " (" + note + ")");
      },
      "");  // --help names the value N
}

}  // namespace nmprof::cli
