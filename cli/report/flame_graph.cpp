#include "cli/report/flame_graph.h"

#include <array>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "cli/report/flame_graph_page.h"
#include "cli/report/frame_names.h"
#include "cli/report/json_writer.h"

namespace nmprof::report {
namespace {

// A node's values: allocated and live, of the recording and, in a diff, of the base.
using Values = std::array<Totals, 4>;

// Stacks merged from the root: one node per function along each path.
struct Node {
  std::string name;
  profile::FrameKind kind = profile::FrameKind::Native;
  Values values;
  std::map<std::string, std::unique_ptr<Node>> children;  // by name: a stable order
};

void add(Node& root, const profile::Profile& profile, uint32_t stack, const Values& values) {
  Node* node = &root;
  auto visit = [&](Node* n) {
    for (size_t i = 0; i < values.size(); i++) n->values[i].add(values[i]);
  };
  visit(node);
  const auto& frames = profile.stacks()[stack].frames;
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
    const profile::Frame& frame = profile.frames()[*f];
    std::string name = function_name(frame);
    auto& child = node->children[name];
    if (!child) child = std::make_unique<Node>(Node{name, frame.kind, {}, {}});
    node = child.get();
    visit(node);
  }
}

// Inside <script>, "</script" ends the element and "<!--" followed by "<script" puts
// the parser where "</script>" no longer does (the page goes blank); U+2028 and
// U+2029 end a line in older script parsers. These characters can only be inside the
// JSON's strings (recorded names, paths, the command line), where \uXXXX means the same.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); i++) {
    char c = json[i];
    if (c == '<' || c == '>' || c == '&') {
      out += c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026";
    } else if (c == '\xE2' && json.compare(i + 1, 2, "\x80\xA8") == 0) {
      out += "\\u2028";
      i += 2;
    } else if (c == '\xE2' && json.compare(i + 1, 2, "\x80\xA9") == 0) {
      out += "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// "v": bytes and count allocated, then live; a diff adds the base's after them.
void write_node(JsonWriter& json, const Node& n, bool diff) {
  json.begin_object();
  json.field("n", n.name);
  json.field("k", profile::frame_kind_name(n.kind));
  json.key("v");
  json.begin_array();
  for (size_t i = 0; i < (diff ? 4u : 2u); i++) {
    json.value(static_cast<int64_t>(n.values[i].bytes + 0.5));
    json.value(static_cast<int64_t>(n.values[i].count + 0.5));
  }
  json.end_array();
  if (!n.children.empty()) {
    json.key("c");
    json.begin_array();
    for (const auto& [name, child] : n.children) write_node(json, *child, diff);
    json.end_array();
  }
  json.end_object();
}

void write_page(const std::string& title, bool has_live, bool live, const Node& root, bool diff, std::ostream& out) {
  std::ostringstream data;
  JsonWriter json(data);
  json.begin_object();
  json.field("title", title);
  json.field("hasLive", has_live);
  json.field("view", live ? "live" : "allocated");
  json.field("diff", diff);
  json.key("root");
  write_node(json, root, diff);
  json.end_object();
  out << kFlameGraphPageStart << script_safe(data.str()) << kFlameGraphPageEnd;
}

}  // namespace

void write_flame_graph(const profile::Profile& profile, const HeapView& view, bool live, std::ostream& out) {
  Node root{"all", profile::FrameKind::Native, {}, {}};
  for (const auto& s : view.stacks) add(root, profile, s.stack, {s.allocated, s.live, {}, {}});
  std::string title = profile.processes.empty() ? std::string("nmprof") : profile.processes[0].command;
  write_page(title, view.has_live, live, root, false, out);
}

void write_diff_flame_graph(const Diff& diff, std::ostream& out) {
  Node root{"all", profile::FrameKind::Native, {}, {}};
  for (const DiffRow& r : diff.stacks) {
    const DiffValues& v = r.values;
    add(root, *r.profile, r.id, {v.new_allocated, v.new_live, v.base_allocated, v.base_live});
  }
  write_page(diff.new_file + " against " + diff.base_file, diff.has_live, diff.live, root, true, out);
}

}  // namespace nmprof::report
