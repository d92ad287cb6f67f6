#include "cli/options/path_check.h"

namespace nmprof::cli {

CLI::Validator path_check() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("empty path") : std::string(); },
                        "");  // --help names the value (FILE, BASE)
}

}  // namespace nmprof::cli
