#include "cli/report/model/peek.h"

#include <algorithm>
#include <map>
#include <regex>

#include "profile/frame_folding.h"

namespace nmprof::report {
namespace {

struct Sums {
  uint32_t frame = 0;
  Totals self, total;
  std::map<uint32_t, PeekNeighbour> callers, callees;  // by function id; kNoFrame: the root
};

void add(std::map<uint32_t, PeekNeighbour>& to, uint32_t function, uint32_t frame, const Totals& t) {
  PeekNeighbour& n = to[function];
  n.frame = frame;
  n.totals.add(t);
}

std::vector<PeekNeighbour> ranked(const std::map<uint32_t, PeekNeighbour>& by_function, size_t top) {
  std::vector<PeekNeighbour> rows;
  for (const auto& [id, n] : by_function) rows.push_back(n);
  std::stable_sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.totals.bytes > y.totals.bytes; });
  if (rows.size() > top) rows.resize(top);
  return rows;
}

}  // namespace

std::vector<PeekRow> peek(const profile::Profile& profile, std::span<const StackRow> stacks, const std::string& regex,
                          size_t top) {
  const std::regex pattern(regex, std::regex::ECMAScript);
  FunctionIds ids(profile);
  std::map<uint32_t, int8_t> matches;  // by function id
  std::map<uint32_t, Sums> sums;
  for (const StackRow& row : stacks) {
    const auto& frames = profile.stacks()[row.stack].frames;
    std::vector<uint32_t> seen;
    for (size_t i = 0; i < frames.size(); i++) {
      uint32_t id = ids.of(frames[i]);
      auto [known, added] = matches.try_emplace(id, 0);
      if (added) known->second = std::regex_search(profile::fold_name(profile.frames()[frames[i]]), pattern) ? 1 : 0;
      if (!known->second || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      Sums& s = sums[id];
      s.frame = frames[i];
      s.total.add(row.totals);
      if (i == 0)
        s.self.add(row.totals);
      else
        add(s.callees, ids.of(frames[i - 1]), frames[i - 1], row.totals);
      if (i + 1 < frames.size())
        add(s.callers, ids.of(frames[i + 1]), frames[i + 1], row.totals);
      else
        add(s.callers, kNoFrame, kNoFrame, row.totals);
    }
  }
  std::vector<PeekRow> rows;
  for (const auto& [id, s] : sums) rows.push_back({s.frame, s.self, s.total, ranked(s.callers, top), ranked(s.callees, top)});
  std::stable_sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.total.bytes > y.total.bytes; });
  if (rows.size() > top) rows.resize(top);
  return rows;
}

}  // namespace nmprof::report
