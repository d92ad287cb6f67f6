// The agent's side of nmprof run's broker (protocol/recording_broker.h): the
// recording's file is opened by nmprof, so that a process that dropped root, chrooted
// or moved to a mount namespace of its own still writes where nmprof collects it.
#pragma once

#include <cstdint>

namespace nmprof::broker_client {

// Finds the socket nmprof left in the process (its number as nmprof set it, else by
// its inode among the process's descriptors) and keeps it safe from the program
// (own_descriptors::adopt). False when there is none: files are then opened by path.
bool connect(int fd, uint64_t inode);
bool connected();

// Opens `name` in the staging directory with `flags` (O_RDONLY, or O_WRONLY with or
// without O_CREAT): a descriptor held by the calling thread (own_descriptors), or a
// negative errno value (-ENOTCONN when there is no broker, nmprof is gone, or the
// request could not be made now: open by path then).
int open(const char* name, int flags);

// In a vfork() child about to exec `program`: tells nmprof, which names it if it
// leaves no recording. Nothing when there is no broker.
void tell_exec(const char* program);

}  // namespace nmprof::broker_client
