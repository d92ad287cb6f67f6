// The stacks of a flame graph page as one tree: a node per function along each path
// from the root, shared by every recording the page shows (the recording, the same
// recording up to its peak, a diff's base), so that their values add up per node.
// Frames that read the same (one function at several lines) are one node, which
// keeps where in the source its frames were.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/report/render/json_writer.h"
#include "profile/profile.h"

namespace nmprof::report {

class StackTree {
 public:
  StackTree();
  // The node at the innermost frame of `stack` (the root for an empty stack), added
  // with the nodes above it as needed.
  uint32_t add(const profile::Profile& profile, uint32_t stack);

  // Fields of the page's data: "kinds" and "libraries" (names), "frames" ([name, kind,
  // library] per frame, library -1 for none), "locations" (texts) and "nodes" (flat
  // triples for nodes 1..n, node 0 being the root: how far before the node its parent
  // is, its frame, its location or -1).
  void write(JsonWriter& json) const;

 private:
  uint32_t frame(const profile::Frame& frame);
  static uint32_t intern(const std::string& text, std::vector<std::string>& names,
                         std::map<std::string, uint32_t>& ids);

  std::vector<std::string> kinds_, libraries_;
  std::map<std::string, uint32_t> kind_ids_, library_ids_;
  std::vector<std::tuple<std::string, uint32_t, int64_t>> frames_;  // name, kind, library
  std::map<std::tuple<std::string, uint32_t, int64_t>, uint32_t> frame_ids_;
  struct Node {
    uint32_t parent = 0;
    uint32_t frame = 0;
    std::set<std::pair<std::string, int32_t>> sources;  // file ("" unknown) and line (-1 unknown) of its frames
  };
  std::vector<Node> nodes_;  // 0: the root
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> node_ids_;  // (parent, frame) -> node
};

}  // namespace nmprof::report
