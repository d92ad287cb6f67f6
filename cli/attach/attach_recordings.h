// The recordings an attach leaves in the target's /tmp (or nmprof's directory in its
// root, target_tmp.h): the agent records into /tmp/nmprof-<nspid>-<26 random
// characters>.%p.jfr, so that each process the target forks while recording writes a
// file of its own (<stem>.<pid>.jfr, the agent expanding %p in each), until they are
// collected into one output and removed. Only regular files of the target's user with
// a single link are taken, reached from the target's /tmp held open: they can be read
// and removed after the target (and its container) has gone.
//
//   AttachRecordings recordings(target, tmp, "nmprof-4123-k2f...");
//   recordings.gather();
//   for (pid_t child : recordings.children_recording()) ...  // stop them first
//   if (recordings.write_to("out.jfr")) recordings.remove();   // else: kept_text()
//
// Under --loop they are read while the agents write them, as RecordingFiles, and not
// held open (let_files_close): a target that forks thousands of children must not
// cost nmprof a descriptor for each; the file of a child that has ended is removed
// once a written chunk holds all of it (release).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "attach/fd_io.h"
#include "attach/result.h"
#include "attach/target_process.h"
#include "attach/target_tmp.h"
#include "cli/chunks/recording_files.h"

namespace nmprof::cli {

// The file= an attach's start gives the agent (a path in the target).
std::string new_recording_template(const attach::TargetProcess& target, const attach::TargetTmp& tmp);
// The file the agent of process `pid` (as the target sees it) records into.
std::string recording_of(std::string_view recording_template, pid_t pid);
// The stem of one of nmprof's recordings in `tmp` ("nmprof-4123-k2f..." for
// /tmp/nmprof-4123-k2f....4123.jfr, or ....jfr as nmprof named them before), or ""
// for a path that is none (a file= of -agentpath, the user's).
std::string recording_stem(const attach::TargetProcess& target, const attach::TargetTmp& tmp, std::string_view path);
// The same for a name in a directory: "" when it is none of nmprof's recordings of
// the process that is `nspid` in its pid namespace.
std::string recording_stem_of_name(pid_t nspid, std::string_view name);

// What an attach session left for a process that has ended since: its agent wrote its
// recording whole as the process exited (and the processes it forked, theirs), into
// the /tmp it had. They are found in nmprof's own /tmp, where a process that shared
// nmprof's file system left them; one with a /tmp of its own (another mount
// namespace, a chroot) took it with it.
struct LeftRecordings {
  attach::TargetProcess owner;  // the ended process as far as its files tell: pid, and their owner
  attach::TargetTmp tmp;        // nmprof's /tmp
  std::string stem;             // the newest session's, when several left files
  int older_sessions = 0;       // other sessions' files left for the same pid
};
// The recordings left in /tmp for process `pid`, or nullopt when there are none
// (nmprof takes the files of its own user only, root those of anyone).
std::optional<LeftRecordings> find_left_recordings(pid_t pid);

class AttachRecordings final : public RecordingFiles {
 public:
  // `tmp`: the target's /tmp (attach::open_target_tmp), kept open by the caller;
  // `stem`: the recordings' (recording_stem).
  AttachRecordings(const attach::TargetProcess& target, const attach::TargetTmp& tmp, std::string stem)
      : target_(target), tmp_(tmp), stem_(std::move(stem)) {}

  const std::string& stem() const { return stem_; }
  // From now on, the files gathered are opened when read, not held open.
  void let_files_close() { hold_open_ = false; }
  // Opens the agent's file and its children's that are there now (and not yet open).
  void gather();
  // The children (pids as the target sees them) whose agent still writes its file.
  std::vector<pid_t> children_recording() const;
  // Writes the whole chunks of every file to `output` (output_writer.h): the
  // target's, then its children's that sampled something.
  attach::Result<void> write_to(const std::string& output) const;
  // Deletes every file gathered (each only while it is the file read).
  void remove();
  // Whether the files gathered hold anything readable (write_to's error is then the output's).
  bool hold_a_recording() const;
  // Where the files gathered are, for a message when they could not be delivered:
  // "/tmp/nmprof-4123-k2f....4123.jfr (and 2 more beside it)", with the path nmprof
  // reaches them by when the target's root is not nmprof's.
  std::string where() const;

  // RecordingFiles: those gathered now (names() gathers).
  std::vector<std::string> names() override;
  int open_file(const std::string& name) const override;
  int open_writable(const std::string& name) const override;
  std::optional<uint64_t> size_of(const std::string& name) const override;
  bool release(const std::string& name) override;

 private:
  struct File {
    std::string name;
    pid_t child = 0;  // 0: the target's own
    attach::UniqueFd fd;  // none once let_files_close() came before it was gathered
  };
  // A descriptor of the file to read: a duplicate of the one held, or opened now
  // (only a regular file of the target's user with a single link); when that fails,
  // none, holding the negative error (-errno, or safe_file's).
  attach::UniqueFd readable(const File& file) const;

  const attach::TargetProcess& target_;
  const attach::TargetTmp& tmp_;
  std::string stem_;
  std::vector<File> files_;
  bool hold_open_ = true;

  const File* find(const std::string& name) const;
};

}  // namespace nmprof::cli
