# Instrumented builds, each in a build directory of its own (docs/hardening.md):
#   -DNMPROF_SANITIZE=address  ASan + UBSan: the CLI and the unit tests
#   -DNMPROF_SANITIZE=thread   TSan: the unit tests (the agent's concurrent structures)
#   -DNMPROF_FUZZ=ON           libFuzzer targets in fuzz/, with ASan + UBSan (clang)
set(NMPROF_SANITIZE "" CACHE STRING "Sanitizer build: address (with undefined) or thread")
option(NMPROF_FUZZ "Build the libFuzzer targets (fuzz/); needs clang" OFF)

set(NMPROF_INSTRUMENTED OFF)
if(NMPROF_SANITIZE STREQUAL "address")
  set(sanitizers address,undefined)
elseif(NMPROF_SANITIZE STREQUAL "thread")
  set(sanitizers thread)
elseif(NOT NMPROF_SANITIZE STREQUAL "")
  message(FATAL_ERROR "NMPROF_SANITIZE must be address or thread, not ${NMPROF_SANITIZE}")
endif()
if(NMPROF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NMPROF_FUZZ needs clang (CC=clang-14 CXX=clang++-14)")
  endif()
  set(sanitizers address,undefined)
  # Coverage feedback for every library the targets link; the targets add libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(sanitizers)
  set(NMPROF_INSTRUMENTED ON)
  # Any report fails the run: UBSan would otherwise print and go on.
  add_compile_options(-fsanitize=${sanitizers} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${sanitizers})
  # gcc's -Wmaybe-uninitialized is wrong about instrumented code (libstdc++'s <regex>
  # under ASan): a warning of the ordinary build only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()
