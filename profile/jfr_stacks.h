// Turns the stack traces of one chunk (jdk.types.StackTrace pool entries, frames
// pointing to Method -> Class -> Symbol entries) into the profile's deduplicated
// stacks, decoding each pool entry once.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "formats/jfr/reading/chunk.h"
#include "profile/profile.h"
#include "profile/source_lines.h"

namespace nmprof::profile {

// The text a value stands for: a string, or the single field of a simple type such as
// jdk.types.Symbol, following constant-pool references. Empty when there is none.
std::string text_of(const jfr::Chunk& chunk, const jfr::Value& value);

class StackResolver {
 public:
  // Native frames get file, line and inlined functions from `lines` (none when null),
  // through the module files of `process`.
  StackResolver(const jfr::Chunk& chunk, Profile& profile, const Process& process, SourceLines* lines)
      : chunk_(chunk), profile_(profile), process_(process), lines_(lines) {}

  // The stack id for a stackTrace field value (a pool reference); an empty stack when
  // the trace is missing. Leading allocator frames (malloc itself, allocator_frames.h) are dropped.
  uint32_t stack(const jfr::Value& reference);

 private:
  struct Method {
    std::string name;
    std::string class_name;
    std::string descriptor;
    bool native_placeholder;  // the descriptor native profilers write instead of a JVM one
  };
  const Method& method(const jfr::Value& reference);
  FrameKind kind(const jfr::Value& reference, const Method& method);
  // The profile's frames for a JFR frame: one, or a native frame after the functions
  // inlined at its address.
  void add_frames(const jfr::Value& frame, std::vector<uint32_t>& frames);
  void add_source_lines(const jfr::Value& frame_value, Frame& frame, std::vector<uint32_t>& frames);

  const jfr::Chunk& chunk_;
  Profile& profile_;
  const Process& process_;
  SourceLines* lines_;
  std::unordered_map<uint64_t, uint32_t> stacks_;  // by pool key
  std::unordered_map<uint64_t, Method> methods_;
  std::unordered_map<uint64_t, std::string> frame_types_;
};

}  // namespace nmprof::profile
