#include "cli/report/model/frame_names.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nmprof::report {
namespace {

// "std::map<int, std::vector<int>>::find" -> "std::map<...>::find". A '<' or '>' that
// belongs to an operator name ("operator<<", "operator->") is kept as is.
std::string collapse_templates(std::string_view s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    bool operator_char = depth == 0 && (out.ends_with("operator") || out.ends_with("operator<") ||
                                        out.ends_with("operator-") || out.ends_with("operator>"));
    if (c == '<' && !operator_char) {
      if (depth++ == 0) out += "<...";
    } else if (c == '>' && depth > 0) {
      if (--depth == 0) out += '>';
    } else if (depth == 0) {
      out += c;
    }
  }
  return depth == 0 ? out : std::string(s);
}

// "parse(char const*, unsigned long) const" -> "parse(...) const".
std::string collapse_parameters(std::string_view s) {
  size_t close = s.rfind(')');
  if (close == std::string_view::npos) return std::string(s);
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (s[i] == ')') depth++;
    if (s[i] == '(' && --depth == 0) {
      if (close == i + 1) return std::string(s);  // already empty
      return std::string(s.substr(0, i + 1)) + "..." + std::string(s.substr(close));
    }
  }
  return std::string(s);
}

// "com.example.store.Cache.load:12" -> "c.e.s.Cache.load:12": every dotted component
// but the class and the method shrinks to its first letter.
std::string abbreviate_packages(std::string_view s) {
  if (s.find("::") != std::string_view::npos || s.find_first_of(" (") != std::string_view::npos) return std::string(s);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); i++) {
    if (i) out += '.';
    out += i + 2 < parts.size() && !parts[i].empty() ? parts[i].substr(0, 1) : parts[i];
  }
  return out;
}

// "ns::parse<int>(char const*) const" -> "ns::parse<...>", for one-line stacks.
std::string bare_function(std::string_view s) {
  std::string name = collapse_parameters(collapse_templates(s));
  size_t open = name.rfind("(...)");
  if (open == std::string::npos) open = name.rfind("()");
  if (open != std::string::npos && open > 0 && !name.substr(0, open).ends_with("operator")) name.resize(open);
  return name;
}

// A Java descriptor's parameters as Java writes them, classes by their simple name:
// "(ILjava/lang/String;[J)V" -> "(int, String, long[])".
std::string java_parameters(std::string_view descriptor) {
  static const std::string_view kPrimitives = "BCDFIJSZ";
  static const char* const kPrimitiveNames[] = {"byte", "char", "double", "float", "int", "long", "short", "boolean"};
  std::string out = "(";
  size_t at = descriptor.starts_with('(') ? 1 : descriptor.size();
  while (at < descriptor.size() && descriptor[at] != ')') {
    size_t dimensions = 0;
    for (; at < descriptor.size() && descriptor[at] == '['; at++) dimensions++;
    if (at >= descriptor.size()) break;
    std::string type;
    if (descriptor[at] == 'L') {
      size_t end = descriptor.find(';', at);
      if (end == std::string_view::npos) break;
      std::string_view name = descriptor.substr(at + 1, end - at - 1);
      type = name.substr(name.rfind('/') + 1);
      at = end + 1;
    } else {
      size_t primitive = kPrimitives.find(descriptor[at++]);
      type = primitive == std::string_view::npos ? "?" : kPrimitiveNames[primitive];
    }
    for (size_t i = 0; i < dimensions; i++) type += "[]";
    out += (out.size() > 1 ? ", " : "") + type;
  }
  return out + ")";
}

// " (file.c:42)": the file without its directories, and the line when known.
std::string source_text(std::string_view path, int32_t line) {
  return " (" + std::string(path.substr(path.rfind('/') + 1)) + (line > 0 ? ":" + std::to_string(line) : "") + ")";
}

// "f(int) [clone .isra.0] [clone .cold]" -> "f(int)": GCC's copies of a function are
// the function to whoever reads a report.
std::string drop_clone_suffixes(std::string_view s) {
  std::string out(s);
  for (size_t at; (at = out.find(" [clone ")) != std::string::npos;) {
    size_t close = out.find(']', at);
    out.erase(at, close == std::string::npos ? std::string::npos : close + 1 - at);
  }
  return out;
}

}  // namespace

std::string function_name(const profile::Frame& frame) {
  if (!profile::is_java(frame.kind)) return frame.function;
  return frame.container.empty() ? frame.function : frame.container + "." + frame.function;
}

std::string frame_suffix(const profile::Frame& frame) {
  if (profile::is_java(frame.kind)) return frame.line > 0 ? ":" + std::to_string(frame.line) : "";
  // Built-in PHP functions ("[internal function]") have no script.
  if (frame.kind == profile::FrameKind::Php)
    return frame.container.starts_with("[") ? "" : source_text(frame.container, frame.line);
  std::string suffix = !frame.file.empty() && frame.line > 0 ? source_text(frame.file, frame.line) : "";
  return frame.inlined ? suffix + " [inlined]" : suffix;
}

std::string frame_name(const profile::Frame& frame, bool parameters) {
  return (parameters ? overload_name(frame) : function_name(frame)) + frame_suffix(frame);
}

std::string fitted_frame_name(const profile::Frame& frame, size_t width, bool parameters) {
  constexpr size_t kShortestName = 12;  // less tells little: the file and line give way
  std::string suffix = frame_suffix(frame);
  std::string name = parameters ? overload_name(frame) : function_name(frame);
  if (name.size() + suffix.size() <= width) return name + suffix;
  if (suffix.size() + kShortestName > width) return shorten(name, width, parameters);
  return shorten(name, width - suffix.size(), parameters) + suffix;
}

std::string frame_location(const profile::Frame& frame) {
  return profile::is_runtime_frame(frame.kind) ? profile::frame_kind_name(frame.kind) : frame.container;
}

// A PHP function is told apart from others of its name by its file.
std::string function_location(const profile::Frame& frame) {
  return profile::is_java(frame.kind) ? std::string() : frame.container;
}

std::string overload_name(const profile::Frame& frame) {
  std::string name = function_name(frame);
  return profile::is_java(frame.kind) && !frame.signature.empty() ? name + java_parameters(frame.signature) : name;
}

Overloads::Overloads(const profile::Profile& profile, std::span<const uint32_t> frames) {
  // Short name -> the first function seen with it, and whether another one has it too.
  std::unordered_map<std::string, std::pair<std::string, bool>> seen;
  std::vector<std::string> short_names;
  for (uint32_t id : frames) {
    short_names.push_back(bare_function(function_name(profile.frames()[id])));
    std::string full = overload_name(profile.frames()[id]);
    auto [it, first] = seen.try_emplace(short_names.back(), full, false);
    if (!first && it->second.first != full) it->second.second = true;
  }
  for (size_t i = 0; i < frames.size(); i++)
    if (seen[short_names[i]].second) frames_.insert(frames[i]);
}

std::string listed_function_name(const profile::Profile& profile, uint32_t id, const Overloads& overloads) {
  const auto& frame = profile.frames()[id];
  return overloads.contains(id) ? overload_name(frame) : function_name(frame);
}

std::string shorten(std::string_view name, size_t width, bool keep_parameters) {
  std::string s(name);
  if (keep_parameters) {
    // What tells an overload apart is its name and parameters: those stay whole.
    if (s.size() > width) s = collapse_templates(s);
    size_t open = s.find('(');
    size_t scope = std::string_view(s).substr(0, open).find_last_of(":.");
    if (s.size() > width && scope != std::string::npos) s = "..." + s.substr(scope + 1);
    return s;
  }
  for (auto step : {collapse_templates, collapse_parameters, drop_clone_suffixes, abbreviate_packages}) {
    if (s.size() <= width) return s;
    s = step(s);
  }
  if (s.size() <= width) return s;
  if (width <= 3) return s.substr(0, width);
  size_t start = s.size() - (width - 3);
  // Start at a name component ("::x", ".x") rather than mid-word, when one is left.
  for (size_t i = start; i + 1 < s.size(); i++) {
    bool scope = s.compare(i, 2, "::") == 0;
    bool package = s[i] == '.' && i > 0 && isalnum(static_cast<unsigned char>(s[i - 1])) &&
                   isalpha(static_cast<unsigned char>(s[i + 1]));
    if (scope || package) {
      start = i + (scope ? 2 : 1);
      break;
    }
  }
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) start++;  // UTF-8 boundary
  return "..." + s.substr(start);
}

std::string one_line_stack(const profile::Profile& profile, const profile::Stack& stack, size_t width,
                           const Overloads& overloads, TellingFrame telling) {
  constexpr size_t kMaxFrameWidth = 40;
  if (stack.frames.empty()) return "(no stack)";
  std::vector<std::string> names;
  for (size_t i = 0; i < stack.frames.size(); i++) {
    const profile::Frame& frame = profile.frames()[stack.frames[i]];
    bool overload = overloads.contains(stack.frames[i]);
    std::string name = overload ? shorten(overload_name(frame), kMaxFrameWidth, true)
                                : shorten(bare_function(function_name(frame)), kMaxFrameWidth);
    if (i == telling.index && telling.same_function && frame.line > 0) name += ":" + std::to_string(frame.line);
    names.push_back(std::move(name));
  }
  // The first `shown` frames, then the telling frame when it comes later.
  auto line = [&](size_t shown) {
    std::string text;
    for (size_t i = 0; i < shown; i++) text += (i ? " < " : "") + names[i];
    size_t end = shown;
    if (telling.index >= shown && telling.index < names.size()) {
      text += (telling.index > shown ? " < ... < " : " < ") + names[telling.index];
      end = telling.index + 1;
    }
    return end < names.size() ? text + " < ..." : text;
  };
  for (size_t shown = names.size(); shown > 0; shown--) {
    std::string text = line(shown);
    if (text.size() <= width) return text;
  }
  return shorten(names[0], width, overloads.contains(stack.frames[0]));
}

std::string collapsed_stack(const profile::Profile& profile, const profile::Stack& stack) {
  if (stack.frames.empty()) return "[no stack]";
  std::string line;
  for (auto frame = stack.frames.rbegin(); frame != stack.frames.rend(); ++frame) {
    if (!line.empty()) line += ';';
    const profile::Frame& f = profile.frames()[*frame];
    std::string name = function_name(f);
    std::replace(name.begin(), name.end(), ';', ':');
    line += name;
    if (f.inlined) line += kInlinedSuffix;
  }
  return line;
}

}  // namespace nmprof::report
