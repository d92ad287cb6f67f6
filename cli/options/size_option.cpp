#include "cli/options/size_option.h"

#include "protocol/agent_options.h"

namespace nmprof::cli {

CLI::Option* add_size_option(CLI::App* command, const std::string& name, std::optional<uint64_t>& target,
                             const std::string& help) {
  auto set = [&target, name](const std::string& text) {
    target = parse_size(text);
    if (!target) throw CLI::ValidationError(name, "'" + text + "' is not a size (examples: 64m, 1g, 4096)");
  };
  return command->add_option_function<std::string>(name, set, help)->type_name("SIZE");
}

}  // namespace nmprof::cli
