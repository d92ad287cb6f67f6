// What the safe-point check (safe_point.h) knows of functions by their names: the C
// library's calls a program may be stopped in (it waits in them while idle), the
// functions threads and processes start in, and the allocator's own. Names as ELF
// symbol tables spell them; internal aliases (__read, __libc_read,
// ___pthread_cond_wait, __vdso_clock_gettime) count as the exported name.
#pragma once

#include <string_view>

namespace nmprof::attach {

// A C library call that holds no lock of the library's own: one that blocks while
// idle (read, epoll_wait, nanosleep, pthread_cond_wait, ...), or reads the clock
// (clock_gettime, in the kernel's vDSO).
bool is_lockless_call(std::string_view name);

// Where a thread or process starts: start_thread, clone3, __libc_start_main, _start.
bool is_entry_function(std::string_view name);

// An allocator's entry points: the malloc family (malloc, free, posix_memalign,
// jemalloc's mallocx ...), functions of allocators linked into a program (je_*,
// tc_*, mi_*), and PHP's heap (ZendMM: _emalloc, zend_mm_*).
bool is_allocator_function(std::string_view name);

}  // namespace nmprof::attach
