// A Java thread as the JVM names it. Made when the thread starts and kept for the
// life of the process (a recording may still refer to it after the thread ended).
// The flusher refreshes the name (Thread.setName after start) by publishing a new
// string; old ones are kept, since a reader may be copying one.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/java/jni/jni.h"

namespace nmprof {

struct JavaThreadInfo {
  std::atomic<const std::string*> name;
  int64_t id;             // java.lang.Thread.getId()
  jobject thread = nullptr;  // a global reference while the thread lives, for renames
};

}  // namespace nmprof
