// How frames and functions are named in reports, and how long names are shortened
// to fit a column without losing the part that identifies them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "cli/report/model/telling_frames.h"
#include "profile/profile.h"

namespace nmprof::report {

// Native: the symbol. Java: "package.Class.method".
std::string function_name(const profile::Frame& frame);
// What follows a frame's name: ":42" for a Java frame with a known line, " (file.c:42)"
// for a native frame with a known source line, " (script.php:42)" for a PHP frame;
// " [inlined]" for a native function inlined into the next frame (its caller).
std::string frame_suffix(const profile::Frame& frame);
// function_name (overload_name with `parameters`) plus frame_suffix.
std::string frame_name(const profile::Frame& frame, bool parameters = false);
// frame_name in width columns: the name is shortened and the suffix kept, file:line
// telling apart what a shortened name no longer does; when the name would keep too
// little, the suffix is left out.
std::string fitted_frame_name(const profile::Frame& frame, size_t width, bool parameters = false);
// Shown next to a frame of a stack: the library of a native frame, the kind
// ("interpreted", "jit", ...) of a Java frame, whose class is part of its name.
std::string frame_location(const profile::Frame& frame);
// Shown next to a function: its library; empty for Java (one method may run in
// several kinds of frames).
std::string function_location(const profile::Frame& frame);

// Fits a function name into width columns: first hides C++ template arguments and
// parameter lists, then GCC's " [clone .isra.0]" suffixes, then abbreviates Java packages, then cuts from the front
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

// Marks a function inlined into its caller in a collapsed stack, as async-profiler
// does (flamegraph.pl's java palette colours it).
inline constexpr const char* kInlinedSuffix = "_[i]";

// A stack as collapsed ("folded") stacks name it, and a diff matches it across
// recordings: frames root first, separated by ';' (a ';' inside a name becomes ':').
std::string collapsed_stack(const profile::Profile& profile, const profile::Stack& stack);

// A stack on one line, innermost first: "parse_input < load_config < main", cut with
// " < ..." when it does not fit. The telling frame stays, after " < ... <" when those
// above it do not fit, with its line when only its line tells it apart.
std::string one_line_stack(const profile::Profile& profile, const profile::Stack& stack, size_t width,
                           const Overloads& overloads = {}, TellingFrame telling = {});

}  // namespace nmprof::report
