// A captured call stack before symbolization: native return addresses and, in a
// JVM, Java method ids. Innermost frame first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/jfr/nmprof_schema.h"

namespace nmprof {

struct CallFrame {
  uint64_t id;     // native: the return address; Java: the jmethodID
  int32_t bci;     // Java: bytecode index (for the line number); native: 0
  uint8_t type;    // jfr::schema::FrameTypeKey (a Java native method is kNative too)
  bool java;       // id is a jmethodID, resolved later through JVMTI
  uint16_t load = 0;  // native: Module::load of the code at id (unloaded libraries' addresses are reused)
  bool operator==(const CallFrame& o) const {
    return id == o.id && bci == o.bci && type == o.type && java == o.java && load == o.load;
  }
};

// Frames live in per-thread scratch memory (sized by the stackdepth option), not on
// the host thread's stack, which may be small.
struct CallStack {
  CallFrame* frames;
  size_t capacity;
  size_t depth = 0;
  bool truncated = false;

  bool full() const { return depth >= capacity; }
  void push(const CallFrame& f) {
    if (full())
      truncated = true;
    else
      frames[depth++] = f;
  }
};

}  // namespace nmprof
