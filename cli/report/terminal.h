// What the text output is written for: how wide the terminal is (COLUMNS first, as
// for ls), and whether it takes colour (a terminal, NO_COLOR unset, TERM not "dumb").
#pragma once

#include <cstddef>

namespace nmprof::report {

constexpr size_t kDefaultTextWidth = 100;  // a file, a pipe, or no size known
constexpr size_t kMinTextWidth = 60;       // narrower terminals get this anyway
constexpr size_t kWideTextWidth = 100000;  // --wide: names are never shortened

size_t terminal_width(int fd);
bool terminal_colour(int fd);

}  // namespace nmprof::report
