#include "cli/report/flame_graph.h"

#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "cli/report/flame_graph_page.h"
#include "cli/report/frame_names.h"
#include "cli/report/json_writer.h"

namespace nmprof::report {
namespace {

// Stacks merged from the root: one node per function along each path.
struct Node {
  std::string name;
  profile::FrameKind kind = profile::FrameKind::Native;
  Totals allocated, live;
  std::map<std::string, std::unique_ptr<Node>> children;  // by name: a stable order
};

void add(Node& root, const profile::Profile& profile, const StackValues& s) {
  Node* node = &root;
  auto visit = [&](Node* n) {
    n->allocated.add(s.allocated);
    n->live.add(s.live);
  };
  visit(node);
  const auto& frames = profile.stacks()[s.stack].frames;
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
    const profile::Frame& frame = profile.frames()[*f];
    std::string name = function_name(frame);
    auto& child = node->children[name];
    if (!child) child = std::make_unique<Node>(Node{name, frame.kind, {}, {}, {}});
    node = child.get();
    visit(node);
  }
}

void write_node(JsonWriter& json, const Node& n) {
  json.begin_object();
  json.field("n", n.name);
  json.field("k", profile::frame_kind_name(n.kind));
  json.key("v");
  json.begin_array();
  for (double v : {n.allocated.bytes, n.allocated.count, n.live.bytes, n.live.count})
    json.value(static_cast<int64_t>(v + 0.5));
  json.end_array();
  if (!n.children.empty()) {
    json.key("c");
    json.begin_array();
    for (const auto& [name, child] : n.children) write_node(json, *child);
    json.end_array();
  }
  json.end_object();
}

// Inside <script>, "</" would end the element: JSON allows "<\/".
std::string script_safe(const std::string& json) {
  std::string out;
  for (size_t i = 0; i < json.size(); i++) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out += '\\';
  }
  return out;
}

}  // namespace

void write_flame_graph(const profile::Profile& profile, const HeapView& view, bool live, std::ostream& out) {
  Node root{"all", profile::FrameKind::Native, {}, {}, {}};
  for (const auto& s : view.stacks) add(root, profile, s);
  std::ostringstream data;
  JsonWriter json(data);
  json.begin_object();
  json.field("title", profile.processes.empty() ? std::string("nmprof") : profile.processes[0].command);
  json.field("hasLive", view.has_live);
  json.field("view", live ? "live" : "allocated");
  json.key("root");
  write_node(json, root);
  json.end_object();
  out << kFlameGraphPageStart << script_safe(data.str()) << kFlameGraphPageEnd;
}

}  // namespace nmprof::report
