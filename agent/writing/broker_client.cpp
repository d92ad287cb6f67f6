#include "agent/writing/broker_client.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agent/safety/own_descriptors.h"
#include "common/descriptor_passing.h"
#include "protocol/recording_broker.h"

namespace nmprof::broker_client {
namespace {

constexpr int kReplyMillis = 10000;  // nmprof answers at once; it is gone after that

int g_slot = -1;  // own_descriptors' kept slot of the socket
uint64_t g_inode = 0;

bool is_the_socket(int fd, uint64_t inode) {
  struct stat st;
  int type = 0;
  socklen_t size = sizeof type;
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode &&
         getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_SEQPACKET;
}

// The descriptor that is the socket `inode`, looked for among the process's own
// (/proc/self/fd, read with getdents64: opendir would allocate from the host's heap).
int find_socket(uint64_t inode) {
  own_descriptors::HeldFile directory("/proc/self/fd", O_RDONLY | O_DIRECTORY);
  if (directory.fd() < 0) return -1;
  alignas(8) char entries[4096];
  for (long n; (n = syscall(SYS_getdents64, directory.fd(), entries, sizeof entries)) > 0;) {
    for (long at = 0; at < n;) {
      auto* entry = reinterpret_cast<struct dirent64*>(entries + at);
      at += entry->d_reclen;
      char* end = nullptr;
      long fd = strtol(entry->d_name, &end, 10);
      if (*end == '\0' && end != entry->d_name && fd != directory.fd() && is_the_socket(static_cast<int>(fd), inode))
        return static_cast<int>(fd);
    }
  }
  return -1;
}

struct Received {
  int socket;
  BrokerReply reply;
  int refused = 0;  // nmprof's answer when it could not open the file
};

// The reply and its descriptor (own_descriptors::Maker::make).
int receive(void* context) {
  auto& r = *static_cast<Received*>(context);
  int fd;
  ssize_t n = receive_with_descriptor(r.socket, &r.reply, sizeof r.reply, &fd);
  if (n == sizeof r.reply && r.reply.error != 0) r.refused = r.reply.error;
  if (n == sizeof r.reply && r.reply.error == 0 && fd >= 0) return fd;
  if (fd >= 0) close(fd);
  return errno = n < 0 ? errno : EPROTO, -1;
}

// Whether `fd` still is the file nmprof sent (own_descriptors::Maker::same).
bool is_the_file(int fd, void* context) {
  const BrokerReply& reply = static_cast<Received*>(context)->reply;
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == reply.device && st.st_ino == reply.inode;
}

// answer_to: the descriptor nmprof answers on, or -1 for a request without answer.
bool send_request(const BrokerRequest& request, int answer_to) {
  int socket = own_descriptors::acquire(g_slot);
  if (socket < 0 || !is_the_socket(socket, g_inode)) {
    // The program took the number with a raw close(2), which no hook sees: the
    // broker is gone for this process, and files are opened by path from now on.
    if (socket >= 0) own_descriptors::release(g_slot);
    own_descriptors::forget_kept(g_slot);
    g_slot = -1;
    return errno = ENOTCONN, false;
  }
  bool sent = send_with_descriptor(socket, &request, sizeof request, answer_to) == sizeof request;
  int error = errno;
  own_descriptors::release(g_slot);
  errno = sent ? 0 : error == EPIPE || error == ECONNREFUSED || error == ECONNRESET ? ENOTCONN : error;
  return sent;
}

}  // namespace

bool connect(int fd, uint64_t inode) {
  if (g_slot >= 0) return true;
  if (inode == 0) return false;
  if (fd < 0 || !is_the_socket(fd, inode)) fd = find_socket(inode);
  if (fd < 0) return false;
  g_slot = own_descriptors::adopt(fd, static_cast<ino_t>(inode));
  g_inode = inode;
  return g_slot >= 0;
}

bool connected() { return g_slot >= 0; }

int open(const char* name, int flags) {
  if (g_slot < 0) return -ENOTCONN;
  BrokerRequest request;
  request.flags = flags;
  request.pid = static_cast<int32_t>(getpid());
  if (strlen(name) >= sizeof request.text) return -ENAMETOOLONG;
  strcpy(request.text, name);
  int pair[2];
  // Not at the moment (a program closing numbers under it, every descriptor taken):
  // the file is opened by path this time.
  if (!own_descriptors::hold_socket_pair(pair)) return -ENOTCONN;
  bool sent = send_request(request, pair[1]);
  int error = errno;
  own_descriptors::close_held(pair[1]);
  int fd = -1;
  Received received{pair[0], {}};
  if (sent) {
    struct pollfd answer = {pair[0], POLLIN, 0};
    int ready;
    while ((ready = poll(&answer, 1, kReplyMillis)) < 0 && errno == EINTR) {
    }
    fd = ready > 0 ? own_descriptors::hold_made({receive, is_the_file, &received}) : (errno = ENOTCONN, -1);
    error = errno;
  }
  own_descriptors::close_held(pair[0]);
  return fd >= 0 ? fd : received.refused ? received.refused : -error;
}

void tell_exec(const char* program) {
  if (g_slot < 0 || !program) return;
  BrokerRequest request;
  request.kind = kExecFromVforkChild;
  request.pid = static_cast<int32_t>(getpid());
  strncpy(request.text, program, sizeof request.text - 1);  // a long path is cut: it only names the program
  send_request(request, -1);
}

}  // namespace nmprof::broker_client
