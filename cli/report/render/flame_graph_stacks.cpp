#include "cli/report/render/flame_graph_stacks.h"

#include "cli/report/model/frame_names.h"

namespace nmprof::report {
namespace {

// The library of a machine-code frame; a Java or PHP frame's container is its class or
// file, part of its name or of its source.
std::string library_of(const profile::Frame& frame) {
  return profile::is_runtime_frame(frame.kind) ? std::string() : frame.container;
}

std::pair<std::string, int32_t> source_of(const profile::Frame& frame) {
  if (frame.kind == profile::FrameKind::Php) return {frame.container, frame.line};
  return {profile::is_java(frame.kind) ? std::string() : frame.file, frame.line};
}

// "parse.c:12", "parse.c:12, 40", "line 7" (a Java method), "a.c:1; b.c:2"; "" when
// nothing is known.
std::string location_text(const std::set<std::pair<std::string, int32_t>>& sources) {
  constexpr size_t kMaxLines = 4;
  std::map<std::string, std::vector<int32_t>> lines;  // by file
  for (const auto& [file, line] : sources) {
    if (file.empty() && line <= 0) continue;
    auto& known = lines[file];
    if (line > 0) known.push_back(line);
  }
  std::string text;
  for (const auto& [file, numbers] : lines) {
    std::string part = file;
    if (!numbers.empty()) part += file.empty() ? "line " : ":";
    for (size_t i = 0; i < numbers.size() && i < kMaxLines; i++) part += (i ? ", " : "") + std::to_string(numbers[i]);
    if (numbers.size() > kMaxLines) part += ", ...";
    text += (text.empty() ? "" : "; ") + part;
  }
  return text;
}

}  // namespace

StackTree::StackTree() : nodes_(1) {}

uint32_t StackTree::intern(const std::string& text, std::vector<std::string>& names,
                           std::map<std::string, uint32_t>& ids) {
  auto [it, added] = ids.try_emplace(text, static_cast<uint32_t>(names.size()));
  if (added) names.push_back(text);
  return it->second;
}

uint32_t StackTree::frame(const profile::Frame& f) {
  std::string library = library_of(f);
  // A native function inlined into its caller keeps its library's colour; its kind says it.
  std::string kind = profile::frame_kind_name(f.kind) + std::string(f.inlined ? ", inlined" : "");
  std::tuple<std::string, uint32_t, int64_t> key{
      function_name(f), intern(kind, kinds_, kind_ids_),
      library.empty() ? -1 : static_cast<int64_t>(intern(library, libraries_, library_ids_))};
  auto [it, added] = frame_ids_.try_emplace(key, static_cast<uint32_t>(frames_.size()));
  if (added) frames_.push_back(key);
  return it->second;
}

uint32_t StackTree::add(const profile::Profile& profile, uint32_t stack) {
  uint32_t node = 0;
  const auto& frames = profile.stacks()[stack].frames;
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
    const profile::Frame& recorded = profile.frames()[*f];
    auto [it, added] = node_ids_.try_emplace({node, frame(recorded)}, static_cast<uint32_t>(nodes_.size()));
    if (added) nodes_.push_back({node, it->first.second, {}});
    node = it->second;
    nodes_[node].sources.insert(source_of(recorded));
  }
  return node;
}

void StackTree::write(JsonWriter& json) const {
  json.key("kinds");
  json.begin_array();
  for (const auto& k : kinds_) json.value(k);
  json.end_array();
  json.key("libraries");
  json.begin_array();
  for (const auto& l : libraries_) json.value(l);
  json.end_array();
  json.key("frames");
  json.begin_array();
  for (const auto& [name, kind, library] : frames_) {
    json.begin_array();
    json.value(name);
    json.value(static_cast<int64_t>(kind));
    json.value(library);
    json.end_array();
  }
  json.end_array();
  std::vector<std::string> locations;
  std::map<std::string, uint32_t> location_ids;
  json.key("nodes");
  json.begin_array();
  for (size_t i = 1; i < nodes_.size(); i++) {
    std::string location = location_text(nodes_[i].sources);
    json.value(static_cast<int64_t>(i - nodes_[i].parent));  // how far back the parent is: short numbers
    json.value(static_cast<int64_t>(nodes_[i].frame));
    json.value(location.empty() ? int64_t{-1} : static_cast<int64_t>(intern(location, locations, location_ids)));
  }
  json.end_array();
  json.key("locations");
  json.begin_array();
  for (const auto& l : locations) json.value(l);
  json.end_array();
}

}  // namespace nmprof::report
