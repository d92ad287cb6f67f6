#include "agent/hooks/loader_caller.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace nmprof {

bool dlopen_depends_on_caller(const char* file, const void* caller) {
  if (!file) return false;                     // the program itself
  if (std::strchr(file, '$')) return true;     // $ORIGIN, $LIB, $PLATFORM: the caller's
  if (std::strchr(file, '/')) return false;    // a path: no search
  Dl_info info;
  struct link_map* map = nullptr;
  if (!dladdr1(caller, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return true;
  // Another namespace than the first (dlmopen): the search is that namespace's.
  Lmid_t space = LM_ID_BASE;
  if (dlinfo(map, RTLD_DI_LMID, &space) != 0 || space != LM_ID_BASE) return true;
  for (const ElfW(Dyn)* entry = map->l_ld; entry && entry->d_tag != DT_NULL; entry++)
    if (entry->d_tag == DT_RPATH || entry->d_tag == DT_RUNPATH) return true;
  // libnmprof.so has neither; the executable's DT_RPATH serves every caller without a
  // DT_RUNPATH, so a caller with neither finds what the agent would.
  return false;
}

}  // namespace nmprof
