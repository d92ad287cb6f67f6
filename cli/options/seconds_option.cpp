#include "cli/options/seconds_option.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace nmprof::cli {
namespace {

// 31536000 rather than 3.1536e+07.
std::string number_text(double value) {
  std::ostringstream text;
  text.precision(10);
  text << value;
  return text.str();
}

}  // namespace

CLI::Option* add_seconds_option(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                const std::string& help) {
  auto set = [&target, name, range](const std::string& text) {
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < range.min ||
        value > range.max)
      throw CLI::ValidationError(name, "'" + text + "' is not a number of seconds from " + number_text(range.min) +
                                           " to " + number_text(range.max));
    target = value;
  };
  return command->add_option_function<std::string>(name, set, help)->type_name("SECONDS");
}

}  // namespace nmprof::cli
