// Small helpers for laying out fixed-width text.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace nmprof::report {

std::string pad_right(std::string s, size_t width);  // left-aligned in width
std::string pad_left(std::string s, size_t width);   // right-aligned in width
// Keeps the start of s, ending in "..." when it is longer than width.
std::string cut_end(std::string_view s, size_t width);
// Writes prefix + text, breaking at spaces so no line exceeds width (unless one word
// alone does); continuation lines are indented by prefix.size().
void write_wrapped(std::ostream& out, std::string_view prefix, std::string_view text, size_t width);
// The path as a shell word, quoted when needed: for commands users copy.
std::string shell_quote(std::string_view path);
// The files read, as a title shows them: "a.jfr", or for the chunks of a looping
// recording "chunk-0.jfr ... chunk-5.jfr (6 files)".
std::string files_text(const std::vector<std::string>& files);
// The files, each quoted, as the arguments of a command line.
std::string shell_quote(const std::vector<std::string>& paths);

}  // namespace nmprof::report
