// Reaching a HotSpot JVM's attach listener: connect to <tmp>/.java_pid<nspid> and,
// while it is missing, ask the JVM to start it (trigger file .attach_pid<nspid> in
// its working directory or /tmp, then SIGQUIT).
#pragma once

#include <chrono>

#include "attach/as_target.h"
#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

// Runs in the helper of run_as_target (the JVM accepts only its own uid and gid, or
// root, and checks the trigger file's owner the same way). Returns a connected
// socket. SIGQUIT is sent only while the JVM has a handler for it (a JVM still
// starting would be killed by it), and the trigger file is always removed again:
// a stray one would turn the user's next `kill -3` into a listener start.
Result<UniqueFd> connect_to_attach_listener(const TargetProcess& target, const TargetDirs& dirs,
                                            std::chrono::milliseconds timeout);

// Removes the trigger files a killed helper could not remove (those of the target's
// user only). Runs in a helper of run_as_target too.
Result<UniqueFd> remove_trigger_files(const TargetProcess& target, const TargetDirs& dirs);

}  // namespace nmprof::attach
