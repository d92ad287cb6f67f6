// A physical walk of the calling thread's Java frames on x86_64, from the frame
// anchor HotSpot sets when Java code calls into native or VM code, the way
// frame::sender and AsyncGetCallTrace's vframeStreamForte step: interpreted frames
// by their rbp chain, compiled frames and native method wrappers by the frame size
// of their CodeBlob, stubs skipped, and entry frames (C++ calling Java through the
// call stub) continued from the anchor their JavaCallWrapper saved. Each compiled
// frame's virtual frames are counted from its nmethod's debug information. Where
// AsyncGetCallTrace ends a trace early (a deoptimized caller), so does the walk.
//
// Reads only the thread's stack above the caller's sp, its JavaThread, committed
// code heap memory, and (JDK 25) nmethod debug information through fault-safe
// copies. No lock, no allocation.
#pragma once

#include <cstdint>
#include <optional>

#include "agent/java/hotspot/code_cache.h"
#include "agent/java/hotspot/vm_layout.h"

namespace nmprof::hotspot {

enum class JavaFrameKind : uint8_t { kInterpreted, kCompiled, kNativeWrapper };

struct JavaFrame {
  JavaFrameKind kind = JavaFrameKind::kInterpreted;
  int virtual_frames = 1;  // more than one where methods were inlined into a compiled one
  bool c1 = false;         // compiled by C1 (tiers 1 to 3)
};

class JavaFrameVisitor {
 public:
  // Returns false to stop the walk.
  virtual bool visit(const JavaFrame& frame) = 0;

 protected:
  ~JavaFrameVisitor() = default;
};

enum class WalkEnd {
  kEndOfStack,  // the outermost Java frame was visited
  kStopped,     // the visitor asked to stop
  kFailed,      // not in native or VM code, or a frame did not look right
};

class JavaStack {
 public:
  JavaStack(const VmLayout& layout, const CodeCache& code) : layout_(layout), code_(code) {}

  // `thread` is the calling thread's JavaThread; `sp` lies in its stack, below
  // every Java frame (nothing under it is read).
  WalkEnd walk(uintptr_t thread, uintptr_t sp, JavaFrameVisitor& visitor) const;

 private:
  enum class Caller { kJava, kEndsTrace, kUnknown };
  // Also gives the caller's blob, if it has one.
  Caller caller_kind(uintptr_t pc, std::optional<CodeBlobView>& blob) const;

  const VmLayout& layout_;
  const CodeCache& code_;
};

}  // namespace nmprof::hotspot
