#include "agent/writing/process_info.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/safety/own_descriptors.h"

namespace nmprof {
namespace {

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                            "@%_-+=:,./") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Field 22 of /proc/self/stat is the start time in clock ticks since boot.
int64_t process_start_millis() {
  std::string stat = own_descriptors::read_held_file("/proc/self/stat");
  size_t paren = stat.rfind(')');
  struct timespec now_real, now_boot;
  clock_gettime(CLOCK_REALTIME, &now_real);
  clock_gettime(CLOCK_BOOTTIME, &now_boot);
  int64_t now_ms = now_real.tv_sec * 1000LL + now_real.tv_nsec / 1000000;
  if (paren == std::string::npos) return now_ms;
  const char* p = stat.c_str() + paren + 2;  // field 3
  for (int field = 3; field < 22 && *p; field++) {
    p = strchr(p, ' ');
    if (!p) return now_ms;
    p++;
  }
  long long ticks = atoll(p);
  long hz = sysconf(_SC_CLK_TCK);
  int64_t boot_ms = now_boot.tv_sec * 1000LL + now_boot.tv_nsec / 1000000;
  return now_ms - (boot_ms - ticks * 1000LL / (hz > 0 ? hz : 100));
}

}  // namespace

// A process that retitled itself over its arguments pads the rest of their space
// with NULs, which read as empty arguments ('redis-server *:6379' '' '' ...): trailing
// empty arguments are dropped (a real one, as in `prog ''`, is lost with them). Its
// title is then one argument, shown as it is: php-fpm: pool www.
std::string read_command_line() {
  std::string raw = own_descriptors::read_held_file("/proc/self/cmdline");
  raw.erase(raw.find_last_not_of('\0') + 1);
  if (raw.find('\0') == std::string::npos) return raw;
  std::string out;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    if (!out.empty()) out += ' ';
    out += shell_quote(raw.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

ProcessInfo read_process_info() {
  ProcessInfo info;
  info.pid = getpid();
  info.parent_pid = getppid();
  info.command_line = read_command_line();
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) info.executable.assign(exe, static_cast<size_t>(n));
  struct utsname u;
  if (uname(&u) == 0) info.host = u.nodename;
  info.start_millis = process_start_millis();
  return info;
}

}  // namespace nmprof
