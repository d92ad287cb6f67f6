#include "cli/run/program_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nmprof::cli {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string find_in_path(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* env = getenv("PATH");
  std::stringstream dirs(env ? env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    if (is_executable_file(candidate)) return candidate;
  }
  return {};
}

// Reads the first bytes of a file (the ELF header and program headers fit in 4 KiB
// for ordinary programs; larger header tables are read on demand).
bool read_at(int fd, void* buf, size_t size, off_t offset) {
  return pread(fd, buf, size, offset) == static_cast<ssize_t>(size);
}

enum class Linkage { Dynamic, Static, Elf32, NotElf, Unreadable };

Linkage elf_linkage(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Linkage::Unreadable;
  Elf64_Ehdr eh;
  Linkage result = Linkage::NotElf;
  if (read_at(fd, &eh, sizeof eh, 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0) {
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
      result = Linkage::Elf32;
    } else {
      result = Linkage::Static;
      for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph))) break;
        if (ph.p_type == PT_INTERP) result = Linkage::Dynamic;
      }
    }
  }
  close(fd);
  return result;
}

// "#!/usr/bin/env python3 -u" -> {"/usr/bin/env", "python3"}.
bool script_interpreter(const std::string& path, std::string* interpreter, std::string* argument) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char line[256] = {};
  ssize_t n = read(fd, line, sizeof line - 1);
  close(fd);
  if (n < 2 || line[0] != '#' || line[1] != '!') return false;
  std::stringstream words(std::string(line + 2, strcspn(line + 2, "\n")));
  words >> *interpreter >> *argument;
  return !interpreter->empty();
}

std::string check(const std::string& command, std::string* error, int depth) {
  std::string path = find_in_path(command);
  // A path that names nothing is not found (127), as in the shell; one that names a
  // file nmprof cannot run is not executable (126).
  if (!path.empty() && access(path.c_str(), F_OK) != 0 && errno == ENOENT) path.clear();
  if (path.empty() || !is_executable_file(path)) {
    *error = path.empty() ? "command not found: " + command
                          : command + " is not an executable file";
    return {};
  }
  std::string interpreter, argument;
  if (depth < 4 && script_interpreter(path, &interpreter, &argument)) {
    bool via_env = interpreter.size() >= 4 && interpreter.compare(interpreter.size() - 4, 4, "/env") == 0;
    std::string real = via_env && !argument.empty() && argument[0] != '-' ? argument : interpreter;
    if (check(real, error, depth + 1).empty()) {
      *error = path + ": its interpreter " + real + ": " + *error;
      return {};
    }
    return path;
  }
  switch (elf_linkage(path)) {
    case Linkage::Static:
      *error = path + " is statically linked: nmprof loads its agent with the dynamic linker (LD_PRELOAD) "
                      "and hooks malloc through the GOT, which a static program has neither of; "
                      "link it dynamically to profile it";
      return {};
    case Linkage::Elf32:
      *error = path + " is a 32-bit program; nmprof's agent is 64-bit (x86-64) only";
      return {};
    default:
      return path;
  }
}

}  // namespace

std::string check_program(const std::string& command, std::string* error) { return check(command, error, 0); }

}  // namespace nmprof::cli
