// A std::ostream over a file descriptor it does not own, which keeps the errno of the
// first write that failed (a std::ofstream says only that something failed).
#pragma once

#include <ostream>
#include <streambuf>

namespace nmprof::cli {

class FdOutputStream : public std::ostream {
 public:
  explicit FdOutputStream(int fd);
  // The errno of the first failed write, 0 while none failed.
  int error() const { return buffer_.error; }

 private:
  struct Buffer : std::streambuf {
    explicit Buffer(int fd);
    int fd;
    int error = 0;
    char data[65536];

    bool drain();
    int_type overflow(int_type c) override;
    int sync() override;
  };
  Buffer buffer_;
};

}  // namespace nmprof::cli
