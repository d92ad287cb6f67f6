#include "cli/options/confidence_option.h"

#include "cli/report/model/sampling_error.h"

namespace nmprof::cli {

CLI::Option* add_confidence_option(CLI::App* command, double& target) {
  auto set = [&target](const std::string& text) {
    std::optional<double> confidence = report::parse_confidence(text);
    if (!confidence)
      throw CLI::ValidationError("--confidence", "'" + text + "' is not a number between 0 and 1 (example: 0.95)");
    target = *confidence;
  };
  return command
      ->add_option_function<std::string>(
          "--confidence", set,
          "How sure the ± intervals are, and the --fail-on-* gates before they fail or pass (between 0 and 1)")
      ->type_name("P")
      ->default_str("0.95");
}

}  // namespace nmprof::cli
