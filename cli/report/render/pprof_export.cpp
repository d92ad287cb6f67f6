#include "cli/report/render/pprof_export.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>

#include "cli/report/model/frame_names.h"
#include "cli/report/model/sample_labels.h"

namespace nmprof::report {
namespace {

using profile::Frame;
using profile::Profile;

int64_t rounded(double v) { return std::llround(v); }

// One mapping per native library (the program's first), one function per distinct
// function, one location per address: a frame, with the functions inlined into it
// at that address as its first lines (innermost first, as pprof has them).
class Symbols {
 public:
  Symbols(const Profile& profile, pprof::Profile& out) : profile_(profile), out_(out) {
    for (const auto& p : profile.processes) modules_.insert(p.modules.begin(), p.modules.end());
    // pprof takes mapping 0 for the main binary and names the profile after it.
    if (!profile.processes.empty() && !profile.processes[0].executable.empty())
      mapping(std::filesystem::path(profile.processes[0].executable).filename().string());
  }

  // The locations of a stack's frames, innermost first.
  std::vector<uint64_t> locations(const profile::Stack& stack) {
    std::vector<uint64_t> ids;
    std::vector<uint32_t> address;  // the frames at one address
    for (uint32_t frame : stack.frames) {
      address.push_back(frame);
      if (profile_.frames()[frame].inlined) continue;  // its caller is at the same address
      ids.push_back(location(address));
      address.clear();
    }
    if (!address.empty()) ids.push_back(location(address));  // inlined frames whose caller was cut
    return ids;
  }

 private:
  uint64_t mapping(const std::string& library) {
    auto [it, added] = mappings_.try_emplace(library, out_.mappings.size() + 1);
    if (added) {
      pprof::Mapping m;
      auto module = modules_.find(library);
      m.filename = module == modules_.end() ? library : module->second.path;
      if (module != modules_.end()) m.build_id = module->second.build_id;
      m.has_functions = true;  // already symbolized: pprof must not look the file up again
      out_.mappings.push_back(m);
    }
    return it->second;
  }

  uint64_t function(const Frame& frame) {
    std::string name = function_name(frame);
    auto [it, added] = functions_.try_emplace(name + '\x1f' + function_location(frame), out_.functions.size() + 1);
    if (added) out_.functions.push_back({name, frame.function, source_file(frame), 0});
    return it->second;
  }

  // A native frame's file from the debug information; a PHP function's is its script.
  static std::string source_file(const Frame& frame) {
    if (frame.kind != profile::FrameKind::Php) return frame.file;
    return frame.container.starts_with("[") ? std::string() : frame.container;  // "[internal function]"
  }

  uint64_t location(const std::vector<uint32_t>& frames) {
    auto [it, added] = locations_.try_emplace(frames, out_.locations.size() + 1);
    if (added) {
      pprof::Location loc;
      const Frame& caller = profile_.frames()[frames.back()];
      // Libraries are mappings; Java classes and PHP scripts are not.
      if (!profile::is_runtime_frame(caller.kind) && !caller.container.empty())
        loc.mapping_id = mapping(caller.container);
      for (uint32_t id : frames) {
        const Frame& frame = profile_.frames()[id];
        loc.lines.push_back({function(frame), frame.line > 0 ? frame.line : 0});
      }
      out_.locations.push_back(std::move(loc));
    }
    return it->second;
  }

  const Profile& profile_;
  pprof::Profile& out_;
  std::map<std::string, profile::ModuleFile> modules_;  // by library name
  std::unordered_map<std::string, uint64_t> mappings_;
  std::unordered_map<std::string, uint64_t> functions_;
  std::map<std::vector<uint32_t>, uint64_t> locations_;  // by frames
};

std::vector<pprof::Label> labels_of(const Profile& profile, const StackValues& s, bool context) {
  const Totals& allocated = s.allocated;
  std::vector<pprof::Label> out;
  if (context) out = sample_labels(profile, profile.allocations()[s.origin]);
  // As Go's heap profiles: the mean size of the stack's allocations, for -tagfocus=bytes=...
  if (allocated.count > 0) out.push_back({"bytes", {}, rounded(allocated.bytes / allocated.count), "bytes", true});
  return out;
}

void describe(const Profile& profile, const HeapView& view, pprof::Profile& out) {
  out.comments.push_back(view.source == profile::AllocationSource::Native
                             ? "nmprof native heap profile"
                             : "Java heap allocation samples (jdk.ObjectAllocationSample)");
  int64_t start = INT64_MAX, end = INT64_MIN;
  for (const auto& p : profile.processes) {
    if (!p.command.empty()) out.comments.push_back("pid " + std::to_string(p.pid) + ": " + p.title());
    start = std::min(start, p.start_nanos);
    end = std::max(end, p.end_nanos);
    if (auto interval = p.sampling_interval()) out.period = static_cast<int64_t>(*interval);
  }
  if (start < end) {
    out.time_nanos = start;
    out.duration_nanos = end - start;
  }
  out.period_type = {"space", "bytes"};
}

}  // namespace

pprof::Profile to_pprof(const Profile& profile, const HeapView& view, bool live_first) {
  pprof::Profile out;
  out.sample_types = {{"alloc_objects", "count"}, {"alloc_space", "bytes"}};
  if (view.has_live) out.sample_types.insert(out.sample_types.end(), {{"inuse_objects", "count"}, {"inuse_space", "bytes"}});
  out.default_sample_type = live_first && view.has_live ? "inuse_space" : "alloc_space";
  describe(profile, view, out);
  Symbols symbols(profile, out);

  std::optional<uint64_t> no_stack;  // a location for samples without frames
  for (const auto& s : view.stacks) {
    pprof::Sample sample;
    sample.location_ids = symbols.locations(profile.stacks()[s.stack]);
    if (sample.location_ids.empty()) {
      if (!no_stack) {
        out.functions.push_back({"[no stack]", {}, {}, 0});
        out.locations.push_back({0, 0, {{out.functions.size(), 0}}});
        no_stack = out.locations.size();
      }
      sample.location_ids.push_back(*no_stack);
    }
    sample.values = {rounded(s.allocated.count), rounded(s.allocated.bytes)};
    if (view.has_live) sample.values.insert(sample.values.end(), {rounded(s.live.count), rounded(s.live.bytes)});
    sample.labels = labels_of(profile, s, view.by_context);
    out.samples.push_back(std::move(sample));
  }
  return out;
}

}  // namespace nmprof::report
