#include "attach/ptrace/target_module.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "agent/unwind/frame_table_builder.h"
#include "attach/fd_io.h"

namespace nmprof::attach {
namespace {

// Frame rows hold 32-bit offsets: no module spans more.
constexpr uint64_t kMaxSpan = uint64_t{1} << 32;
// Aliases and nested ranges are few: a pc's functions are among the last ones starting before it.
constexpr size_t kMaxEnclosingScan = 16;

// Anonymous memory laid out as the module's segments are in the target, filled
// from the file with pread (not mmap: a file truncated meanwhile reads as zeros
// instead of faulting).
class SegmentCopy {
 public:
  explicit SegmentCopy(const ElfLayout& layout) : first_(layout.first_load_vaddr) {
    for (const ElfSegment& s : layout.loads) {
      if (s.vaddr < first_ || s.memory_size > kMaxSpan || s.vaddr - first_ > kMaxSpan) return;  // not a real module
      size_ = std::max(size_, s.vaddr - first_ + s.memory_size);
    }
    void* at = size_ ? mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                     : MAP_FAILED;
    base_ = at == MAP_FAILED ? nullptr : static_cast<uint8_t*>(at);
  }
  ~SegmentCopy() {
    if (base_) munmap(base_, size_);
  }
  SegmentCopy(const SegmentCopy&) = delete;
  SegmentCopy& operator=(const SegmentCopy&) = delete;

  bool ok() const { return base_ != nullptr; }
  uintptr_t at(uint64_t vaddr) const { return reinterpret_cast<uintptr_t>(base_) + (vaddr - first_); }
  uintptr_t load_bias() const { return at(0); }

  // The part of `segment` the file holds; the range read, empty if none.
  unwind::MemoryRange fill(int fd, const ElfSegment& segment) {
    uint8_t* to = base_ + (segment.vaddr - first_);
    ssize_t n = pread(fd, to, segment.file_size, static_cast<off_t>(segment.offset));
    if (n <= 0) return {};
    return {reinterpret_cast<uintptr_t>(to), reinterpret_cast<uintptr_t>(to) + static_cast<uintptr_t>(n)};
  }

 private:
  uint64_t first_;
  uint64_t size_ = 0;
  uint8_t* base_ = nullptr;
};

bool contains(const ElfSegment& segment, uint64_t vaddr) {
  return vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.file_size;
}

// The module's rules, relative to its ELF addresses (bias 0). .eh_frame sits in a
// read-only segment, or with the code in older layouts: only those are read.
unwind::FrameTable read_frame_table(int fd, const ElfLayout& layout) {
  const ElfSegment& header = layout.eh_frame_hdr;
  if (header.memory_size == 0) return {};
  SegmentCopy copy(layout);
  if (!copy.ok()) return {};
  std::vector<unwind::MemoryRange> readable;
  for (const ElfSegment& s : layout.loads) {
    bool needed = s.readable && (!s.executable || contains(s, header.vaddr));
    if (!needed || s.file_size > s.memory_size) continue;
    if (unwind::MemoryRange range = copy.fill(fd, s); range.end > range.begin) readable.push_back(range);
  }
  uintptr_t begin = copy.at(header.vaddr);
  unwind::FrameTableBuild build =
      unwind::build_frame_table({begin, begin + header.memory_size}, readable, copy.load_bias());
  std::span<const unwind::FrameRow> rows = build.table.rows();
  return unwind::FrameTable(0, std::vector<unwind::FrameRow>(rows.begin(), rows.end()));
}

}  // namespace

Result<TargetModule> TargetModule::read(const TargetProcess& target, const Mapping& object) {
  auto fd = open_mapped_file(target, object);
  if (!fd) return fd.error();
  UniqueFd file(*fd);
  return from_image(file.get(), object.path, object.start);
}

Result<TargetModule> TargetModule::read_vdso(const TargetProcess& target, const Mapping& vdso) {
  std::string image(vdso.end - vdso.start, '\0');
  UniqueFd memory(open(("/proc/" + std::to_string(target.pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!memory || pread(memory.get(), image.data(), image.size(), static_cast<off_t>(vdso.start)) !=
                     static_cast<ssize_t>(image.size()))
    return Error{"cannot read the vDSO of process " + std::to_string(target.pid)};
  UniqueFd copy(memfd_create("nmprof-vdso", MFD_CLOEXEC));
  if (!copy || !write_all(copy.get(), image)) return Error{"cannot copy the vDSO"};
  return from_image(copy.get(), vdso.path, vdso.start);
}

Result<TargetModule> TargetModule::from_image(int fd, std::string path, uint64_t start) {
  auto layout = read_elf_layout(fd);
  if (!layout) return Error{path + ": " + layout.error().message};
  auto functions = read_functions(fd);
  if (!functions) return Error{path + ": " + functions.error().message};
  uint64_t bias = start - layout->first_load_vaddr;
  unwind::FrameTable local = read_frame_table(fd, *layout);
  std::span<const unwind::FrameRow> rows = local.rows();
  return TargetModule(std::move(path), bias, layout->has_interpreter, std::move(*functions),
                      unwind::FrameTable(bias, std::vector<unwind::FrameRow>(rows.begin(), rows.end())));
}

std::vector<const ElfFunction*> TargetModule::functions_at(uint64_t pc) const {
  uint64_t value = pc - bias_;
  auto after = std::upper_bound(functions_.begin(), functions_.end(), value,
                                [](uint64_t v, const ElfFunction& f) { return v < f.value; });
  std::vector<const ElfFunction*> found;
  for (size_t scanned = 0; after != functions_.begin() && scanned < kMaxEnclosingScan; scanned++) {
    const ElfFunction& f = *--after;
    if (value - f.value < f.size) found.push_back(&f);
  }
  return found;
}

bool TargetModule::exports(std::string_view name) const {
  return std::any_of(functions_.begin(), functions_.end(),
                     [name](const ElfFunction& f) { return f.exported && f.name == name; });
}

}  // namespace nmprof::attach
