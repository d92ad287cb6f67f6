// `nmprof run` under seccomp filters of its own (a container's default profile, a
// systemd unit's SystemCallFilter=): its command inherits them, and a filter may kill
// a process for a system call it did not plan for, such as the agent's. nmprof checks
// first: a probe process, under the same filters, runs with the agent preloaded and
// does what the agent's work makes it do (threads sampling every allocation, the
// writer thread, a fork, an exec). When the probe ends normally, the agent is told
// that the filters were checked (agent option seccomp=N); a process under more
// filters than that (its program added one) stays unrecorded. When a filter kills
// the probe, the command is not run.
#pragma once

#include <string>

namespace nmprof::cli {

// The first argument that makes nmprof the probe (main.cpp); not a command users see.
inline constexpr char kSeccompProbeArgument[] = "__nmprof-seccomp-probe";

// How many seccomp filters nmprof runs under that the agent's system calls pass: 0
// when none; -1 with a one-line *error when a filter killed the probe or it could not
// be run. `agent`: libnmprof.so's path.
int checked_seccomp_filters(const std::string& agent, std::string* error);

// The probe's work, in the probe process (the agent preloaded): returns its exit status.
int seccomp_probe_main(int argc, char** argv);

}  // namespace nmprof::cli
