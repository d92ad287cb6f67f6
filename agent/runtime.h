// A language runtime the agent profiles inside the process (the JVM, PHP's engine):
// it adds its frames to sampled stacks, names them, and follows the agent through
// start, fork and stop. The agent (agent.cpp) holds one of each and calls them all.
#pragma once

#include <string>

#include "agent/stacks/call_stack.h"
#include "agent/stacks/frame_resolver.h"
#include "agent/stacks/stack_capture.h"
#include "agent/stacks/thread_scratch.h"
#include "agent/threads/thread_state.h"

namespace nmprof {

class Runtime {
 public:
  virtual ~Runtime() = default;

  // Looks for the runtime in this process as the agent starts on `thread` (preloaded,
  // or attached through ptrace: the thread nmprof stopped). Says in one line what
  // cannot be profiled.
  virtual void find(int thread) = 0;
  // Whether find() found it: attached again after a stop, it is rearmed instead.
  virtual bool found() const = 0;
  // After stop(): puts its hooks back at the next checkpoint.
  virtual void rearm() = 0;
  // The process reached a point where the runtime's state may have changed (its
  // heap made, libraries loaded): hooks what can be hooked now. checkpoint_due()
  // says whether there is anything to do (asked often, it must be cheap).
  virtual void checkpoint() = 0;
  virtual bool checkpoint_due() const = 0;
  // The thread that forked, in the child (now `child_tid`).
  virtual void after_fork_in_child(int parent_tid, int child_tid) = 0;
  // Gives the runtime back everything the agent hooked.
  virtual void stop() = 0;
  // For the recording's "runtime" setting ("PHP 8.2"); empty when it says nothing.
  virtual std::string description() const = 0;

  // The sampled path: appends the runtime's frames to `stack`, where the native walk
  // ended (`end`). No lock, no allocation.
  virtual void append_frames(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch) = 0;
  // When thread `t` began freeing what the program still held as it ended (a PHP
  // CLI's shutdown), in ticks; 0 when it has not. The blocks allocated before then
  // that it frees stay live in the recording; those born later are freed as usual.
  virtual uint64_t leftovers_born_before(ThreadState& t) = 0;
  // Names the runtime's frames and passes the others on to the resolver it was made
  // with; null when its frames are named elsewhere (Java's, by the JVM's flusher).
  virtual FrameResolver* frame_resolver() = 0;
};

}  // namespace nmprof
