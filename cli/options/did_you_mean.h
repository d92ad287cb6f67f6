// "did you mean --depth?": the name a mistyped option or command was probably meant to be.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace nmprof::cli {

// The one of `names` that `given` is a typo of (a letter wrong, missing, extra, or two
// swapped; two such slips in a long name), or "" when none is that close.
std::string closest_name(std::string_view given, const std::vector<std::string>& names);
// The long options of a command as typed: "--depth" (one letter is too short to guess).
std::vector<std::string> option_names(const CLI::App& command);
// The first of args[first..] (up to "--") that looks like a long option `command`
// does not have ("--dpeth", "--dpeth=3"), skipping the values of its options; "" if none.
std::string unknown_long_option(const CLI::App& command, const std::vector<std::string>& args, size_t first);
// "unknown option '--dpeth' for report; did you mean --depth? (see nmprof report --help)".
std::string unknown_option_message(const CLI::App& command, std::string_view given);

}  // namespace nmprof::cli
