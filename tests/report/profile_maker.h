// Profiles built by hand for report tests: frames are native functions of "app"
// unless a library is given as "function@library".
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"

namespace nmprof::report::testing {

class ProfileMaker {
 public:
  profile::Profile profile;

  uint32_t process(int64_t pid, int64_t start_nanos, int64_t end_nanos, const std::string& command = "app") {
    profile::Process p;
    p.pid = pid;
    p.command = command;
    p.start_nanos = start_nanos;
    p.end_nanos = end_nanos;
    profile.processes.push_back(p);
    return static_cast<uint32_t>(profile.processes.size() - 1);
  }

  uint32_t stack(const std::vector<std::string>& functions, bool truncated = false) {
    profile::Stack s;
    s.truncated = truncated;
    for (const auto& f : functions) {
      size_t at = f.find('@');
      s.frames.push_back(profile.add_frame(
          {f.substr(0, at), at == std::string::npos ? "app" : f.substr(at + 1), profile::FrameKind::Native, -1, {}}));
    }
    return profile.add_stack(s);
  }

  profile::Sample sample(uint32_t process, uint32_t stack, int64_t time, uint64_t address, uint64_t size,
                         float weight = 1) {
    profile::Sample s;
    s.process = process;
    s.stack = stack;
    s.time_nanos = time;
    s.address = address;
    s.size = size;
    s.weight = weight;
    s.thread = profile.add_thread({process, 1, 0, "main"});
    return s;
  }

  // Returns the index of the allocation (origin) the sample is summed into.
  uint32_t alloc(uint32_t process, uint32_t stack, int64_t time, uint64_t address, uint64_t size, float weight = 1) {
    return profile.add_allocation(sample(process, stack, time, address, size, weight));
  }

  void free(uint32_t process, int64_t time, uint64_t address) { profile.add_free(process, time, address); }
};

}  // namespace nmprof::report::testing
