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

// The option's value in seconds: `text` with its unit multiplied (1 for none).
CLI::Option* add_option_in_seconds(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                   const std::string& help, bool with_unit) {
  auto set = [&target, name, range, with_unit](const std::string& text) {
    double value = 0;
    double unit = 1;
    size_t length = text.size();
    if (with_unit && length > 1 && (text.back() == 's' || text.back() == 'm' || text.back() == 'h')) {
      unit = text.back() == 'h' ? 3600 : text.back() == 'm' ? 60 : 1;
      length--;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + length, value, std::chars_format::fixed);
    value *= unit;
    if (ec != std::errc() || end != text.data() + length || !std::isfinite(value) || value < range.min ||
        value > range.max)
      throw CLI::ValidationError(name, "'" + text + "' is not a " + (with_unit ? "duration" : "number of seconds") +
                                           " from " + number_text(range.min) + " to " + number_text(range.max) +
                                           (with_unit ? " seconds (90, 90s, 1.5m, 2h)" : ""));
    target = value;
  };
  return command->add_option_function<std::string>(name, set, help)->type_name(with_unit ? "DURATION" : "SECONDS");
}

}  // namespace

CLI::Option* add_seconds_option(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                const std::string& help) {
  return add_option_in_seconds(command, name, target, range, help, false);
}

CLI::Option* add_duration_option(CLI::App* command, const std::string& name, double& target, SecondsRange range,
                                 const std::string& help) {
  return add_option_in_seconds(command, name, target, range, help, true);
}

}  // namespace nmprof::cli
