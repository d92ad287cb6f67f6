// glibc's dlopen, dlmopen and dlsym look at who calls them (their return address):
// dlopen searches a bare name in the calling library's DT_RPATH or DT_RUNPATH and
// expands $ORIGIN from its path, in the caller's namespace; dlsym(RTLD_NEXT) searches
// the libraries after the caller's. A hook that calls them makes libnmprof.so the
// caller: a plugin found through its host's RUNPATH was "not found", and a chain of
// RTLD_NEXT look-ups (OpenMP's ompt_start_tool) found itself for ever. These tell the
// hooks when the caller matters; they then leave the call as the program made it.
#pragma once

namespace nmprof {

// Whether dlopen(file) or dlmopen(…, file) called from `caller` (a return address)
// may find another library than the same call made from libnmprof.so.
bool dlopen_depends_on_caller(const char* file, const void* caller);

}  // namespace nmprof
