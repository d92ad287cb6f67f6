// The JVM in this process, as the agent profiles it (runtime.h). The JVM finds the
// agent, not the other way round (entry/jvm_agent.cpp: Agent_OnLoad, Agent_OnAttach): once
// its Java frames can be had, the sampled path adds them where native frames end in
// Java code. Its frames are named by the JVM's flusher thread, its hooks are JVMTI's.
#pragma once

#include <atomic>
#include <string>

#include "agent/java/java_stacks.h"
#include "agent/runtime.h"

namespace nmprof {

class JavaRuntime : public Runtime {
 public:
  // From now on Java frames are added by `stacks` (null: no more).
  void set_stacks(JavaStacks* stacks) { stacks_.store(stacks, std::memory_order_release); }

  void find(int) override {}
  bool found() const override { return false; }
  void rearm() override {}
  void checkpoint() override {}
  bool checkpoint_due() const override { return false; }
  void after_fork_in_child(int, int) override {}
  void stop() override {}
  std::string description() const override { return {}; }
  void append_frames(ThreadState& t, const NativeWalkEnd& end, CallStack& stack, ThreadScratch& scratch) override {
    if (JavaStacks* java = stacks_.load(std::memory_order_acquire)) java->append(t, end, stack, scratch);
  }
  uint64_t leftovers_born_before(ThreadState&) override { return 0; }
  FrameResolver* frame_resolver() override { return nullptr; }

 private:
  std::atomic<JavaStacks*> stacks_{nullptr};
};

}  // namespace nmprof
