#include "cli/options/did_you_mean.h"

#include <algorithm>

#include "formats/text/utf8.h"

namespace nmprof::cli {
namespace {

// Edits (a letter replaced, inserted, deleted, or two neighbours swapped) from a to b.
size_t typo_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); i++) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); j++) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    for (size_t j = 1; j <= b.size(); j++) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      bool swapped = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
      if (swapped) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(std::string_view given, const std::vector<std::string>& names) {
  constexpr size_t kLongName = 8;  // from here, two slips still name one option
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& name : names) {
    size_t allowed = name.size() >= kLongName ? 2 : 1;
    size_t distance = typo_distance(given, name);
    if (distance <= allowed && distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

std::string unknown_long_option(const CLI::App& command, const std::vector<std::string>& args, size_t first) {
  for (size_t i = first; i < args.size(); i++) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    const CLI::Option* option = command.get_option_no_throw(name);
    if (!option && arg[1] == '-') return arg;
    bool takes_value = option && option->get_items_expected_max() > 0;  // flags expect none
    if (takes_value && name == arg) i++;  // its value is the next argument
  }
  return "";
}

std::string unknown_option_message(const CLI::App& command, std::string_view given) {
  std::string name(given.substr(0, given.find('=')));
  std::string meant = closest_name(name, option_names(command));
  std::string message = "unknown option '" + text::escape_controls(given) + "' for " + command.get_name();
  if (!meant.empty()) message += "; did you mean " + meant + "?";
  return message + " (see nmprof " + command.get_name() + " --help)";
}

}  // namespace nmprof::cli
