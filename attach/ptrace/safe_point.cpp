#include "attach/ptrace/safe_point.h"

#include <algorithm>

#include "attach/ptrace/known_functions.h"

namespace nmprof::attach {
namespace {

// The C library's frames a thread starts under: start_thread above clone3 (1), or
// __libc_start_call_main and __libc_start_main above the program's _start (2).
constexpr size_t kMaxLibcEntryFrames = 2;

bool any_name(const StackFrame& frame, bool (*matches)(std::string_view)) {
  return std::any_of(frame.functions.begin(), frame.functions.end(),
                     [matches](const std::string& name) { return matches(name); });
}

std::string where(const StackFrame& frame) {
  std::string place = frame.functions.empty() ? frame.module : frame.functions.front() + " in " + frame.module;
  switch (frame.kind) {
    case CodeKind::kLibc: return "in " + place + " (the C library)";
    case CodeKind::kLoader: return "in " + place + " (the dynamic loader)";
    case CodeKind::kAgent: return "in " + place + " (nmprof's agent)";
    case CodeKind::kAllocator: return "in " + place + " (an allocator)";
    case CodeKind::kUnknown: return "in code nmprof cannot read" + (place.empty() ? "" : " (" + place + ")");
    case CodeKind::kProgram: break;
  }
  return "in " + place;
}

StackVerdict unsafe(std::string why) { return {false, std::move(why)}; }

// Where the thread's entry frames begin: the outermost frame and the C library's
// entry functions right above it. Names, where known, must be entry functions.
size_t entry_frames_begin(std::span<const StackFrame> frames) {
  size_t begin = frames.size() - 1;
  size_t allowed = frames[begin].kind == CodeKind::kLibc ? kMaxLibcEntryFrames - 1 : kMaxLibcEntryFrames;
  for (size_t taken = 0; taken < allowed && begin > 0; taken++) {
    const StackFrame& above = frames[begin - 1];
    if (above.kind != CodeKind::kLibc || (!above.functions.empty() && !any_name(above, is_entry_function))) break;
    begin--;
  }
  return begin;
}

}  // namespace

StackVerdict judge_stack(std::span<const StackFrame> frames, bool reached_entry) {
  if (frames.empty() || !reached_entry) return unsafe("its stack could not be followed to where the thread started");
  const StackFrame& outermost = frames.back();
  if (outermost.kind != CodeKind::kLibc && outermost.kind != CodeKind::kProgram)
    return unsafe("its stack ends " + where(outermost));
  size_t entry = entry_frames_begin(frames);
  // The top: the C library's frames of one call the program made, which must hold no lock
  // (an idle wait, the clock).
  size_t top = 0;
  while (top < entry && frames[top].kind == CodeKind::kLibc) top++;
  if (top == entry) return unsafe("the C library runs it: no frame of the program");
  if (top > 0 && !any_name(frames[top - 1], is_lockless_call)) return unsafe(where(frames[top - 1]));
  for (size_t i = top; i < entry; i++)
    if (frames[i].kind != CodeKind::kProgram) return unsafe(where(frames[i]));
  return {true, ""};
}

}  // namespace nmprof::attach
