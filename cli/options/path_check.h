// The check of an option that names a file (-o, --diff, report's recording): an empty
// one is refused in one line, "--output: empty path", rather than taken for the
// current directory ("-o  is a directory"), for standard output, or for no option.
#pragma once

#include <CLI/CLI.hpp>

namespace nmprof::cli {

CLI::Validator path_check();

}  // namespace nmprof::cli
