#include "agent/modules.h"

#include <link.h>
#include <sched.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace nmprof {
namespace {

std::string executable_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct Scan {
  const std::vector<const Module*>* known;
  std::vector<const Module*> found;
  unsigned long long adds = 0, subs = 0;
};

int visit(dl_phdr_info* info, size_t size, void* arg) {
  auto& scan = *static_cast<Scan*>(arg);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    scan.adds = info->dlpi_adds;
    scan.subs = info->dlpi_subs;
  }
  for (const Module* m : *scan.known) {
    if (m->bias == info->dlpi_addr && m->phdr == info->dlpi_phdr) {
      scan.found.push_back(m);
      return 0;
    }
  }
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
  const char* name = info->dlpi_name;
  m->is_vdso = info->dlpi_addr != 0 && getauxval(AT_SYSINFO_EHDR) >= m->start &&
               getauxval(AT_SYSINFO_EHDR) < m->end;
  if (m->is_vdso)
    m->name = "[vdso]";
  else {
    m->path = name && *name ? std::string(name) : executable_path();
    m->name = basename_of(m->path);
  }
  m->is_jvm = m->name == "libjvm.so";
  scan.found.push_back(m);
  return 0;
}

}  // namespace

const unwind::FrameTable& Module::frame_table() const {
  int state = table_state_.load(std::memory_order_acquire);
  if (state == 2) return table_;
  if (state == 1 || !table_state_.compare_exchange_strong(state, 1, std::memory_order_acq_rel)) {
    // Another thread is compiling it, which takes a millisecond or two and holds no
    // lock: waiting gives this sample its real stack.
    while (table_state_.load(std::memory_order_acquire) != 2) sched_yield();
    return table_;
  }
  if (eh_frame_hdr) {
    auto hdr = reinterpret_cast<uintptr_t>(eh_frame_hdr);
    table_ = unwind::build_frame_table({hdr, hdr + eh_frame_hdr_size}, readable, bias).table;
  }
  table_state_.store(2, std::memory_order_release);
  return table_;
}

bool ModuleMap::refresh() {
  std::vector<const Module*> known;
  for_each([&known](const Module& m) { known.push_back(&m); });
  Scan scan{&known, {}};
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
  for (const Module* m : scan.found) {
    if (!m->is_jvm) continue;
    jvm_start_.store(m->start, std::memory_order_relaxed);
    jvm_end_.store(m->end, std::memory_order_relaxed);
  }
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

}  // namespace nmprof
