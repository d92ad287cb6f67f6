// nmprof run's side of the broker (protocol/recording_broker.h): a thread that opens
// recording files in the staging directory for the command's processes, with
// nmprof's rights, whatever theirs are now (a worker that dropped root, a chroot, a
// private /tmp), and hands each its descriptor.
//
// The socket end the command inherits also tells which processes belong to the run
// after the command ended: every one of them holds it (the agent keeps it from the
// program's close loops), whatever it did to its environment and title.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nmprof::cli {

// A vfork() child of the command exec'd `program`; `pid` is as it knew itself.
struct ExecFromVforkChild {
  pid_t pid;
  std::string program;
};

class RecordingBroker {
 public:
  RecordingBroker() = default;
  ~RecordingBroker();  // stop()
  RecordingBroker(const RecordingBroker&) = delete;
  RecordingBroker& operator=(const RecordingBroker&) = delete;

  // Starts answering for the staging directory `staging_fd` (which must stay open
  // until stop()). False with a one-line *error.
  bool start(int staging_fd, std::string* error);
  // The end the command inherits (no FD_CLOEXEC), above the command's soft
  // RLIMIT_NOFILE where nmprof may put it (it then costs the program none of its
  // numbers), and its inode: the agent options' broker=FD:INODE.
  int command_end() const { return command_end_; }
  uint64_t command_end_inode() const { return command_end_inode_; }
  // Closes nmprof's copy of the command's end, once the command runs.
  void close_command_end();

  // The processes other than nmprof that hold the command's end: those of the run
  // still alive (root sees every user's; others only their own).
  std::vector<pid_t> holders() const;
  // The execs that vfork() children told of, so far.
  std::vector<ExecFromVforkChild> execs() const;

  // Ends the thread: later requests fail, and their agents open files by path.
  void stop();

 private:
  void serve();

  int staging_fd_ = -1;
  int own_end_ = -1;
  int command_end_ = -1;
  uint64_t command_end_inode_ = 0;
  std::thread thread_;
  mutable std::mutex execs_lock_;
  std::vector<ExecFromVforkChild> execs_;
};

}  // namespace nmprof::cli
