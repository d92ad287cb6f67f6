// A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT from abort()) ends a process
// without exit handlers, when its profile matters most. The agent's handler writes
// the recording out, puts back the disposition that was there before it, and lets
// the signal do what it would have done: the process dies the same way, core dump
// included.
//
// A host handler installed before the agent's is called first, as if the agent were
// not there: if it handles the signal (a JIT's implicit null check, a GC barrier),
// nothing is written. A host handler installed after replaces the agent's, and calls
// it only if it chains to the handler it found. In a JVM, which uses SIGSEGV for
// itself, the agent installs nothing, and removes its handlers when libjvm.so is
// loaded later (the java launcher loads it with dlopen).
#pragma once

namespace nmprof {

// flush: writes the recording; it may block on the allocator if the crash happened
// inside it, so it runs under a watchdog that lets the signal kill the process
// after a few seconds. Only dispositions that are SIG_DFL or a handler are taken over.
void install_fatal_handlers(bool (*flush)());
// Puts back what was there before, where the agent's handler is still installed.
void remove_fatal_handlers();

}  // namespace nmprof
