#include "cli/output/fd_output_stream.h"

#include <unistd.h>

#include <cerrno>

namespace nmprof::cli {

FdOutputStream::Buffer::Buffer(int descriptor) : fd(descriptor) { setp(data, data + sizeof data); }

bool FdOutputStream::Buffer::drain() {
  for (const char* at = pbase(); at < pptr();) {
    ssize_t n = ::write(fd, at, static_cast<size_t>(pptr() - at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!error) error = n < 0 ? errno : EIO;
      setp(data, data + sizeof data);  // dropped: the stream has failed
      return false;
    }
    at += n;
  }
  setp(data, data + sizeof data);
  return true;
}

FdOutputStream::Buffer::int_type FdOutputStream::Buffer::overflow(int_type c) {
  if (error || !drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
  return traits_type::not_eof(c);
}

int FdOutputStream::Buffer::sync() { return !error && drain() ? 0 : -1; }

FdOutputStream::FdOutputStream(int fd) : std::ostream(nullptr), buffer_(fd) { rdbuf(&buffer_); }

}  // namespace nmprof::cli
