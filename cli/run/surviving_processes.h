// The processes of a run still alive once its command has ended: a daemon, or a child
// its shell left behind when a signal ended it. One that wrote its file already is
// seen by the file's lock too (recording_merge.cpp); one that has not written yet
// (the agent creates its file on its first write) only here. Without this, its
// samples went missing and the summary blamed the sampling interval.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nmprof::cli {

struct SurvivingProcess {
  pid_t pid;
  std::string name;  // its comm, as the kernel has it (unescaped)
};

// `pids` (the recording broker's holders(): every process of the run holds its socket,
// however it renamed itself) with their names.
std::vector<SurvivingProcess> surviving_processes(const std::vector<pid_t>& pids);

}  // namespace nmprof::cli
