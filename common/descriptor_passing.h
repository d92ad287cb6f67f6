// One message with at most one descriptor attached (SCM_RIGHTS), over a Unix socket:
// how the recording broker hands out files and how attach's helper hands back what
// it opened. libc only, no allocation: the agent uses it too.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace nmprof {

// sendmsg of `size` bytes with `fd` attached (none when fd < 0), MSG_NOSIGNAL: a
// peer gone is EPIPE, not a SIGPIPE; again after EINTR. The bytes sent, or -1 with
// errno.
ssize_t send_with_descriptor(int socket, const void* data, size_t size, int fd);

// recvmsg of at most `size` bytes, again after EINTR. *fd gets the descriptor
// attached (close-on-exec), or -1 when there is none or it did not fit; *truncated
// whether the message or its control data were cut. The bytes received (0: the peer
// is gone), or -1 with errno.
ssize_t receive_with_descriptor(int socket, void* data, size_t size, int* fd, bool* truncated = nullptr);

}  // namespace nmprof
