// The ELF objects mapped into a process (/proc/<pid>/maps), where each was loaded,
// and the address of a function in one of them, read from the very file the target
// mapped (checked by device and inode: after a package upgrade the path may name
// another file than the one in memory).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attach/result.h"
#include "attach/target_process.h"

namespace nmprof::attach {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  bool executable = false;
  uint64_t offset = 0;
  unsigned dev_major = 0;
  unsigned dev_minor = 0;
  uint64_t inode = 0;
  std::string path;  // as the target sees it; "" for anonymous memory
};

std::vector<Mapping> parse_maps(std::string_view maps);

// The mapping at file offset 0 of the first object whose file name `matches`.
std::optional<Mapping> find_object(const std::vector<Mapping>& maps,
                                   const std::function<bool(std::string_view file_name)>& matches);

// True for the file names of the C library and the dynamic loader (glibc and musl).
bool is_libc(std::string_view file_name);
bool is_dynamic_loader(std::string_view file_name);
// An nmprof agent: libnmprof.so, or a copy nmprof placed in a container (nmprof-agent-*.so).
bool is_nmprof_agent(std::string_view file_name);

// "/usr/lib/libc.so.6" -> "libc.so.6"
std::string_view file_name_of(std::string_view path);

// Opens the file behind `object` for reading, through /proc/<pid>/map_files/ (the
// mapped file itself), or else its path in the target's root without following any
// symbolic link; only a regular file with the mapping's device and inode, checked
// before it is opened for reading (O_PATH), so that nothing the target planted (a
// link, a FIFO, a device) makes root open another file or block.
Result<int> open_mapped_file(const TargetProcess& target, const Mapping& object);

// The address of function `name` of the loaded `object` in the target.
Result<uint64_t> remote_function(const TargetProcess& target, const Mapping& object, std::string_view name);

}  // namespace nmprof::attach
