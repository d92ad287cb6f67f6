// How frames and functions are named in reports, and how long names are shortened
// to fit a column without losing the part that identifies them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "formats/profile/profile.h"

namespace nmprof::report {

// Native: the symbol. Java: "package.Class.method".
std::string function_name(const profile::Frame& frame);
// function_name plus ":line" for Java frames with a known line, " (file.c:42)" for
// native frames with a known source line.
std::string frame_name(const profile::Frame& frame);
// Shown next to a frame of a stack: the library of a native frame, the kind
// ("interpreted", "jit", ...) of a Java frame, whose class is part of its name.
std::string frame_location(const profile::Frame& frame);
// Shown next to a function: its library; empty for Java (one method may run in
// several kinds of frames).
std::string function_location(const profile::Frame& frame);

// Fits a function name into width columns: first hides C++ template arguments and
// parameter lists, then abbreviates Java packages, then cuts from the front
// (keeping the method name, from a "::" or "." on when there is one) with "...".
std::string shorten(std::string_view name, size_t width);

// A stack on one line, innermost first: "parse_input < load_config < main", cut with
// " < ..." when it does not fit.
std::string one_line_stack(const profile::Profile& profile, const profile::Stack& stack, size_t width);

}  // namespace nmprof::report
