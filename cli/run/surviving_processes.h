// The processes that still record into run's staging directory once its command has
// ended: a daemon, or a child its shell left behind when a signal ended it. One that
// wrote its file already is seen by the file's lock (recording_merge.cpp); one that
// has not written yet (the agent creates its file on its first write) is seen only
// here, by the staging directory in its NMPROF_OPTIONS. Without this, its samples
// went missing and the summary blamed the sampling interval.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nmprof::cli {

struct SurvivingProcess {
  pid_t pid;
  std::string name;  // its comm, as the kernel has it (unescaped)
};

// Read from each process's environment as it started (/proc/PID/environ): processes
// nmprof may not read (another user's, to a non-root nmprof) are not seen.
std::vector<SurvivingProcess> processes_recording_into(const std::string& staging_directory);

}  // namespace nmprof::cli
