// The agent's lifecycle: start recording in this process (from LD_PRELOAD, or later
// as a JVMTI agent), keep the hooks on newly loaded libraries, follow fork(), and
// write the recording out when the process ends.
#pragma once

#include "protocol/agent_options.h"

namespace nmprof {

// How the agent came into the process; recorded in the file.
// NativeAttach: loaded by `nmprof attach` through ptrace (entry/native_attach.cpp).
enum class AgentMode { Preload, JvmStartup, JvmAttach, NativeAttach };

// Installs the hooks and starts recording (again, after stop_agent()). Returns
// false (after one log line) when it cannot; allocations then pass through untouched.
bool start_agent(const AgentOptions& options, AgentMode mode);
// Writes the recording out; nothing is recorded afterwards.
void finish_agent();
// finish_agent(), and the GOT slots get their original functions back: a process
// whose recording stopped runs as it did before.
void stop_agent();

class Recorder;
class JavaStacks;
// The agent's recorder (recording or stopped), null before the agent first started
// (and in a process it stays out of, below).
Recorder* agent_recorder();
// False in a child made without fork() (raw clone(), syscall(SYS_fork)) that the
// agent could not follow (unforked_child.h): it stays out of it. Follows it first
// when it can.
bool process_followed();
// From now on the sampled path adds Java frames where native frames end in Java
// code (null: no more).
void set_java_stacks(JavaStacks* stacks);

}  // namespace nmprof
