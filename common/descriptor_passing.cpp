#include "common/descriptor_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace nmprof {

ssize_t send_with_descriptor(int socket, const void* data, size_t size, int fd) {
  struct iovec bytes = {const_cast<void*>(data), size};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr message = {};
  message.msg_iov = &bytes;
  message.msg_iovlen = 1;
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    struct cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof fd);
  }
  ssize_t n;
  while ((n = sendmsg(socket, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n;
}

ssize_t receive_with_descriptor(int socket, void* data, size_t size, int* fd, bool* truncated) {
  struct iovec bytes = {data, size};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr message = {};
  message.msg_iov = &bytes;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  *fd = -1;
  for (struct cmsghdr* c = n >= 0 ? CMSG_FIRSTHDR(&message) : nullptr; c; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      memcpy(fd, CMSG_DATA(c), sizeof *fd);
  }
  if (truncated) *truncated = n >= 0 && (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  return n;
}

}  // namespace nmprof
