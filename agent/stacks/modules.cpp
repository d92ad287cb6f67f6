#include "agent/stacks/modules.h"

#include <link.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace nmprof {
namespace {

// The program's path; the kernel adds " (deleted)" once it was removed or replaced.
// Without /proc (a chroot has none, usually), the name it was started by, from the
// auxiliary vector: its frames then keep their module's name, and its symbols are
// read from that file when it is the build that runs.
std::string executable_path() {
  char buf[4096];
  ssize_t n = readlink(kExecutable, buf, sizeof buf - 1);
  std::string path = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  if (path.ends_with(" (deleted)")) path.resize(path.size() - strlen(" (deleted)"));
  if (path.empty())
    if (const char* started_as = reinterpret_cast<const char*>(getauxval(AT_EXECFN))) path = started_as;
  return path;
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether the module's file is still the one it was loaded from.
bool same_file(const Module& m) {
  struct stat st;
  return stat(m.is_executable ? kExecutable : m.path.c_str(), &st) == 0 && st.st_dev == m.identity.device &&
         st.st_ino == m.identity.inode;
}

}  // namespace

struct ModuleScan {
  ModuleMap* map;
  const std::vector<const Module*>* known;
  std::vector<const Module*> found;
  unsigned long long adds = 0, subs = 0;

  // A known module is this mapping unless it was unloaded and another loaded in its
  // place since the last scan: only then can the same address, program headers and
  // path be another build (the path rebuilt), which its build id tells, or without
  // one its file's identity.
  bool is(const Module& m, const dl_phdr_info& info) const {
    if (m.bias != info.dlpi_addr || m.phdr != info.dlpi_phdr) return false;
    if (m.is_vdso) return true;
    const std::string path = info.dlpi_name && *info.dlpi_name ? std::string(info.dlpi_name) : executable_path();
    if (m.path != path) return false;
    bool replaced_since = adds != map->loads_seen_ && subs != map->unloads_seen_;
    if (!replaced_since) return true;
    return m.identity.build_id.empty() ? same_file(m) : symbols::loaded_build_id(info) == m.identity.build_id;
  }
  Module* make(const dl_phdr_info* info);
};

namespace {

int visit(dl_phdr_info* info, size_t size, void* arg) {
  auto& scan = *static_cast<ModuleScan*>(arg);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    scan.adds = info->dlpi_adds;
    scan.subs = info->dlpi_subs;
  }
  for (const Module* m : *scan.known) {
    if (scan.is(*m, *info)) {
      scan.found.push_back(m);
      return 0;
    }
  }
  scan.found.push_back(scan.make(info));
  return 0;
}

// Made when the agent loads, not on first use: a function's static would register
// its destructor with atexit from inside a hook, which deadlocks when the sampled
// allocation is atexit's own (libc holds its exit-function lock around it).
const unwind::FrameTable kNoTable;

}  // namespace

Module* ModuleScan::make(const dl_phdr_info* info) {
  auto* m = new Module{};
  m->bias = info->dlpi_addr;
  m->phdr = info->dlpi_phdr;
  m->start = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = m->bias + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      m->start = std::min(m->start, start);
      m->end = std::max(m->end, start + ph.p_memsz);
      if (ph.p_flags & PF_R) m->readable.push_back({start, start + ph.p_memsz});
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      m->eh_frame_hdr = reinterpret_cast<const void*>(start);
      m->eh_frame_hdr_size = ph.p_memsz;
    }
  }
  m->image = symbols::LoadedImage::of(*info);
  const char* name = info->dlpi_name;
  m->is_vdso = info->dlpi_addr != 0 && getauxval(AT_SYSINFO_EHDR) >= m->start &&
               getauxval(AT_SYSINFO_EHDR) < m->end;
  if (m->is_vdso)
    m->name = "[vdso]";
  else {
    m->is_executable = !name || !*name;
    m->path = m->is_executable ? executable_path() : std::string(name);
    m->name = basename_of(m->path);
  }
  m->is_jvm = m->name == "libjvm.so";
  std::string build_id = symbols::loaded_build_id(*info);
  struct stat st;
  if (!m->path.empty() && stat(m->is_executable ? kExecutable : m->path.c_str(), &st) == 0)
    m->identity = symbols::ImageIdentity::of_file(st, std::move(build_id));
  else
    m->identity.build_id = std::move(build_id);
  if (++map->loads_ == 0) map->loads_ = 1;  // 0 is "no module"; after 65535 loads, a repeat is harmless
  m->load = map->loads_;
  m->made_before = map->newest_.load(std::memory_order_relaxed);
  map->newest_.store(m, std::memory_order_release);
  return m;
}

const unwind::FrameTable& Module::frame_table() const {
  if (const unwind::FrameTable* table = table_.load(std::memory_order_acquire)) return *table;
  bool idle = false;
  if (!building_.compare_exchange_strong(idle, true, std::memory_order_acq_rel)) {
    // Another thread is compiling it, which takes a millisecond or two and holds no
    // lock: waiting gives this sample its real stack. (A forked child resets the
    // flag: the compiling thread did not come along.)
    const unwind::FrameTable* table;
    while (!(table = table_.load(std::memory_order_acquire))) {
      if (!building_.load(std::memory_order_acquire)) return frame_table();
      sched_yield();
    }
    return *table;
  }
  // Built apart and published whole: a fork in the middle leaves the child no
  // half-written table, only a flag to reset.
  const unwind::FrameTable* table = &kNoTable;
  if (eh_frame_hdr) {
    auto hdr = reinterpret_cast<uintptr_t>(eh_frame_hdr);
    auto* built = new (std::nothrow)
        unwind::FrameTable(unwind::build_frame_table({hdr, hdr + eh_frame_hdr_size}, readable, bias).table);
    if (built) table = built;
  }
  table_.store(table, std::memory_order_release);
  building_.store(false, std::memory_order_release);
  return *table;
}

void ModuleMap::after_fork_in_child() const {
  for_each([](const Module& m) { m.forget_unfinished_table(); });
}

bool ModuleMap::refresh() {
  std::vector<const Module*> known;
  for_each([&known](const Module& m) { known.push_back(&m); });
  ModuleScan scan{this, &known, {}};
  dl_iterate_phdr(visit, &scan);
  if (snapshot_.load(std::memory_order_relaxed) && scan.adds == loads_seen_ && scan.subs == unloads_seen_)
    return false;
  loads_seen_ = scan.adds;
  unloads_seen_ = scan.subs;
  std::sort(scan.found.begin(), scan.found.end(),
            [](const Module* a, const Module* b) { return a->start < b->start; });
  auto* s = static_cast<Snapshot*>(malloc(sizeof(Snapshot) + scan.found.size() * sizeof(const Module*)));
  if (!s) return false;
  s->count = scan.found.size();
  std::copy(scan.found.begin(), scan.found.end(), s->modules);
  snapshot_.store(s, std::memory_order_release);  // the old snapshot stays: readers may be in it
  has_jvm_.store(std::any_of(scan.found.begin(), scan.found.end(), [](const Module* m) { return m->is_jvm; }),
                 std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

const Module* ModuleMap::find(uintptr_t pc) const {
  const Snapshot* s = snapshot_.load(std::memory_order_acquire);
  if (!s) return nullptr;
  size_t lo = 0, hi = s->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->modules[mid]->start <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return nullptr;
  const Module* m = s->modules[lo - 1];
  return m->contains(pc) ? m : nullptr;
}

const Module* ModuleMap::find(uintptr_t pc, uint16_t load) const {
  const Module* m = find(pc);
  if (m && m->load == load) return m;
  for (m = newest_.load(std::memory_order_acquire); m; m = m->made_before)
    if (m->load == load && m->contains(pc)) return m;
  return nullptr;
}

}  // namespace nmprof
