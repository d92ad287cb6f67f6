// How frames and functions are named in reports, and how long names are shortened
// to fit a column without losing the part that identifies them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "formats/profile/profile.h"

namespace nmprof::report {

// Native: the symbol. Java: "package.Class.method".
std::string function_name(const profile::Frame& frame);
// function_name (overload_name with `parameters`) plus ":line" for Java frames with a
// known line, " (file.c:42)" for native frames with a known source line, and
// " [inlined]" for a function inlined into the next frame.
std::string frame_name(const profile::Frame& frame, bool parameters = false);
// Shown next to a frame of a stack: the library of a native frame, the kind
// ("interpreted", "jit", ...) of a Java frame, whose class is part of its name.
std::string frame_location(const profile::Frame& frame);
// Shown next to a function: its library; empty for Java (one method may run in
// several kinds of frames).
std::string function_location(const profile::Frame& frame);

// Fits a function name into width columns: first hides C++ template arguments and
// parameter lists, then abbreviates Java packages, then cuts from the front
// (keeping the method name, from a "::" or "." on when there is one) with "...".
// keep_parameters (an overload): hides template arguments, then the scope, and keeps
// the name and parameters whole even when they do not fit.
std::string shorten(std::string_view name, size_t width, bool keep_parameters = false);

// The frames of one list (the stacks shown together, a table of functions) that
// other functions would be mistaken for: overloads, which their short names do not
// tell apart ("parse" for parse(int) and parse(double)). Those show their parameters.
class Overloads {
 public:
  Overloads() = default;
  Overloads(const profile::Profile& profile, std::span<const uint32_t> frames);
  bool contains(uint32_t frame) const { return frames_.contains(frame); }

 private:
  std::unordered_set<uint32_t> frames_;
};

// function_name with the parameters: a Java method's from its descriptor,
// "app.Cache.put(String, byte[])".
std::string overload_name(const profile::Frame& frame);
// The name of frame `id` in a list: function_name, or overload_name for an overload.
std::string listed_function_name(const profile::Profile& profile, uint32_t id, const Overloads& overloads);

// A stack on one line, innermost first: "parse_input < load_config < main", cut with
// " < ..." when it does not fit.
std::string one_line_stack(const profile::Profile& profile, const profile::Stack& stack, size_t width,
                           const Overloads& overloads = {});

}  // namespace nmprof::report
