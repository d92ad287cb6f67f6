// A watch over the process from outside its threads, for the programs that end
// without running anything of the agent's: a raw exit_group (every Go program ends
// so, cgo's included) or a SIGKILL ends all threads at once, and no thread can write
// after that. The watch is a process of its own that shares the program's memory
// (clone with CLONE_VM, not a thread: exit_group does not end it), holds none of its
// descriptors, blocks every signal and sleeps in ppoll() on a pidfd of the program.
// When the program's last thread has gone without ending its recording, the watch
// makes the recording's last write from the memory the program left, then exits;
// when the program ends its recording itself (exit, exec, a stop), the watch just
// goes.
//
// It is made by a short-lived middle clone, so that it is init's (or a subreaper's)
// child from its start, never the program's or its parent's: nobody the program knows
// waits for it. Until the program has gone it runs no code that touches thread-local
// storage (bare_task.h): it shares the thread pointer of the thread that made it. For
// its last write it takes the TLS of the thread remembered by remember_thread() (the
// main thread's static TLS block, which lasts as long as the memory), all the
// program's threads being gone. While it may write, it holds exit_watch_lock on its
// own description of the file, so that nmprof run waits for it before joining the
// recordings.
#pragma once

namespace nmprof::exit_watch {

// The thread whose TLS the last write uses: the main thread as the agent starts
// (preloaded), the forking thread in a fork child.
void remember_thread();
// Starts the watch unless one runs. `file`: a held descriptor (own_descriptors) of the
// recording opened for writing, a description of its own; the watch keeps it, locked,
// and start() closes this process's number either way. at_death(file) runs in the
// watch once every thread of the process has gone without end(). False when no watch
// runs (no pidfd_open or close_range: Linux before 5.9; no memory; PID 1).
bool start(int file, void (*at_death)(int file));
// Root, a capability or set-id credentials: what a program may give up, and a watch
// made now would keep while it shares the program's memory (and could be made to run
// the program's code). No watch is made then.
bool holds_privileges();
bool running();
// The process ends its recording itself (exit, exec, a stop): the watch goes without
// writing, at the latest a second later (it looks once a second), or when the process
// does.
void end();
// In a fork child: the parent's watch is not the child's.
void forget_after_fork();

}  // namespace nmprof::exit_watch
