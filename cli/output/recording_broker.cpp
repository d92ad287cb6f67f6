#include "cli/output/recording_broker.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/descriptor_passing.h"
#include "common/safe_file.h"
#include "protocol/recording_broker.h"

namespace nmprof::cli {
namespace {

constexpr size_t kMaxExecs = 100000;  // a shell loop's worth; nmprof's memory stays bounded

// Where the command's end goes: above the soft RLIMIT_NOFILE the command inherits,
// so that the numbers the program may open are all its own. nmprof raises its own
// soft limit for the moment; where the hard limit leaves no room, the end goes as
// high as the soft limit allows.
int place_high(int fd) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return fcntl(fd, F_DUPFD, 3);
  rlim_t wanted = limit.rlim_cur + 16;
  struct rlimit raised = limit;
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max > wanted)
    raised.rlim_cur = wanted + 1;
  else
    raised.rlim_cur = limit.rlim_max;
  bool was_raised = raised.rlim_cur > limit.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0;
  int high = was_raised ? static_cast<int>(raised.rlim_cur) - 1 : static_cast<int>(limit.rlim_cur) - 1;
  int copy = fcntl(fd, F_DUPFD, high > 3 ? high : 3);
  if (copy < 0) copy = fcntl(fd, F_DUPFD, 3);
  if (was_raised) setrlimit(RLIMIT_NOFILE, &limit);
  return copy;
}

// The request and the descriptor to answer on (-2: none); -1 at the end (stop(), or
// every process of the command gone).
int receive(int socket, BrokerRequest* request, bool* well_formed) {
  int answer_to;
  bool truncated;
  ssize_t n = receive_with_descriptor(socket, request, sizeof *request, &answer_to, &truncated);
  if (n <= 0) return -1;
  *well_formed = n == sizeof *request && !truncated && request->magic == kBrokerMagic &&
                 request->text[sizeof request->text - 1] == '\0';
  return answer_to >= 0 ? answer_to : -2;
}

void answer(int socket, int file, int error) {
  BrokerReply reply;
  reply.error = error;
  struct stat st;
  if (file >= 0 && fstat(file, &st) == 0) reply.device = st.st_dev, reply.inode = st.st_ino;
  send_with_descriptor(socket, &reply, sizeof reply, file);
}

}  // namespace

RecordingBroker::~RecordingBroker() { stop(); }

bool RecordingBroker::start(int staging_fd, std::string* error) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    *error = std::string("cannot make the recording broker's socket: ") + strerror(errno);
    return false;
  }
  own_end_ = pair[0];
  command_end_ = place_high(pair[1]);
  close(pair[1]);
  struct stat st;
  if (command_end_ < 0 || fstat(command_end_, &st) != 0) {
    *error = std::string("cannot place the recording broker's socket: ") + strerror(errno);
    stop();
    return false;
  }
  command_end_inode_ = st.st_ino;
  staging_fd_ = staging_fd;
  thread_ = std::thread([this] {
    // The signals nmprof handles go to its main thread.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    serve();
  });
  return true;
}

void RecordingBroker::serve() {
  for (;;) {
    BrokerRequest request;
    bool well_formed = false;
    int answer_to = receive(own_end_, &request, &well_formed);
    if (answer_to == -1) return;
    if (well_formed && request.kind == kExecFromVforkChild) {
      std::lock_guard<std::mutex> lock(execs_lock_);
      if (execs_.size() < kMaxExecs) execs_.push_back({request.pid, request.text});
    }
    if (answer_to < 0) continue;
    int file = -1, error = -EINVAL;
    if (well_formed && request.kind == kOpenRecording && broker_may_open(request.text, request.flags)) {
      int access = request.flags & O_ACCMODE;
      file = request.flags & O_CREAT ? safe_file::create_or_open_owned(staging_fd_, request.text, access, 0600)
                                     : safe_file::open_owned(staging_fd_, request.text, access, geteuid());
      error = file < 0 ? file : 0;
    }
    answer(answer_to, file, error);
    if (file >= 0) close(file);
    close(answer_to);
  }
}

std::vector<ExecFromVforkChild> RecordingBroker::execs() const {
  std::lock_guard<std::mutex> lock(execs_lock_);
  return execs_;
}

void RecordingBroker::close_command_end() {
  if (command_end_ >= 0) close(command_end_);
  command_end_ = -1;
}

std::vector<pid_t> RecordingBroker::holders() const {
  std::vector<pid_t> found;
  if (command_end_inode_ == 0) return found;
  std::string link = "socket:[" + std::to_string(command_end_inode_) + "]";
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  pid_t self = getpid();
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    DIR* dir = opendir(fds.c_str());
    if (!dir) continue;
    bool holds = false;
    while (dirent* fd = readdir(dir)) {
      char target[64];
      ssize_t n = readlinkat(dirfd(dir), fd->d_name, target, sizeof target - 1);
      if (n > 0 && std::string_view(target, static_cast<size_t>(n)) == link) holds = true;
      if (holds) break;
    }
    closedir(dir);
    if (holds) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

void RecordingBroker::stop() {
  if (own_end_ >= 0) shutdown(own_end_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  if (own_end_ >= 0) close(own_end_);
  own_end_ = -1;
  close_command_end();
}

}  // namespace nmprof::cli
