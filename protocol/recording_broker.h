// How `nmprof run`'s processes get their recording files from nmprof itself, so that
// a process that can no longer reach the staging directory by path still delivers
// its recording: one that dropped root, chrooted, or lives in a mount namespace of its
// own (a private /tmp, a read-only root).
//
// nmprof makes a SOCK_SEQPACKET socket pair and leaves one end open in its command
// (agent option broker=FD:INODE; the inode finds it again wherever the program moved
// it). An agent sends a BrokerRequest on it, with the sending end of a socket pair of
// its own (SCM_RIGHTS) for the answer; nmprof opens the file in the staging directory
// with its own rights and sends back a BrokerReply with the descriptor. The inherited
// socket reaches nmprof from any process of the command, and from no other. A vfork()
// child that execs tells nmprof which program, without waiting for a reply.
#pragma once

#include <cstdint>
#include <string_view>

namespace nmprof {

constexpr uint32_t kBrokerMagic = 0x6e6d7062;  // "nmpb"

enum BrokerRequestKind : uint32_t {
  kOpenRecording = 0,  // open `text`, the file's name in the staging directory, with `flags`
  // A vfork() child, which shares its parent's recording, execs `text`: if that
  // program leaves no recording (statically linked, setuid), nmprof says so. No reply.
  kExecFromVforkChild = 1,
};

struct BrokerRequest {
  uint32_t magic = kBrokerMagic;
  uint32_t kind = kOpenRecording;
  int32_t flags = 0;  // O_RDONLY, or O_WRONLY with O_CREAT or not
  int32_t pid = 0;    // the sender's, as it knows itself (its file's name has it)
  char text[256] = {};
};

struct BrokerReply {
  int32_t error = 0;    // 0 and the file's descriptor, or -errno / a safe_file code (common/safe_file.h)
  uint64_t device = 0;  // the file's, so that the agent can check the descriptor it got
  uint64_t inode = 0;
};

// Whether a request names a file the broker opens: a process's recording ("1234.jfr",
// from %p.jfr) or its pid-suffixed twin ("1234.1234.jfr"), and asks for no more than
// reading, or writing and creating.
bool broker_may_open(std::string_view name, int flags);

}  // namespace nmprof
