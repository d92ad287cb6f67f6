// Unwinder timings, printed as text: not a test, the numbers depend on the machine.
//   unwind_bench [shared-library ...]
// Walks: from a callback at the end of a chain of CFI-only frames (and of one of
// frame-pointer-only frames), batches of walks, median ns per walk and per frame.
// Builds: the FrameTable of libc.so.6 and of each library named (dlopen'ed first),
// median build time over repetitions, rows, bytes.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "agent/unwind/frame_table_builder.h"
#include "agent/unwind/registers.h"
#include "agent/unwind/stack_walker.h"
#include "tests/unwind/loaded_modules.h"
#include "tests/unwind/test_chains.h"
#include "tests/unwind/thread_stack.h"

using namespace nmprof::unwind;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct WalkTiming {
  size_t depth = 0;
  double ns_per_walk = 0;
  WalkStop stop = WalkStop::kBadFrame;
};

extern "C" __attribute__((noinline)) int time_walks(void* context) {
  constexpr int kBatches = 31, kWalksPerBatch = 20000;
  auto* timing = static_cast<WalkTiming*>(context);
  const test::LoadedModules& modules = test::LoadedModules::instance();
  uintptr_t stack_end = test::thread_stack_end();
  uintptr_t frames[128];
  std::vector<double> batches;
  for (int batch = 0; batch < kBatches; ++batch) {
    auto start = Clock::now();
    for (int i = 0; i < kWalksPerBatch; ++i) {
      StackWalk walk = walk_stack(current_registers(), stack_end, modules, frames);
      timing->depth = walk.depth;
      timing->stop = walk.stop;
    }
    batches.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / kWalksPerBatch);
  }
  timing->ns_per_walk = median(batches);
  return 0;
}

void report_walks(const char* what, int (*chain)(UnwindTestCallback, void*)) {
  WalkTiming timing;
  chain(time_walks, &timing);
  std::printf("walk %-28s %2zu frames (stop %d): %7.1f ns/walk, %5.1f ns/frame\n", what, timing.depth,
              static_cast<int>(timing.stop), timing.ns_per_walk, timing.ns_per_walk / timing.depth);
}

struct Found {
  const char* suffix;
  const dl_phdr_info* info = nullptr;
  dl_phdr_info copy;
};

void report_build(const std::string& suffix) {
  Found found{suffix.c_str(), nullptr, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* raw) {
        auto* found = static_cast<Found*>(raw);
        if (!std::string_view(info->dlpi_name).ends_with(found->suffix)) return 0;
        found->copy = *info;  // the phdrs it points to stay mapped while the module is loaded
        found->info = &found->copy;
        return 1;
      },
      &found);
  if (found.info == nullptr) {
    std::printf("build %s: not loaded\n", suffix.c_str());
    return;
  }
  std::vector<double> times;
  FrameTableBuild build;
  for (int i = 0; i < 9; ++i) {
    auto start = Clock::now();
    build = build_frame_table(*found.info);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  size_t rows = build.table.rows().size();
  std::printf("build %s: %.2f ms, %zu FDEs (%zu rejected), %zu rows x %zu B = %.1f KiB%s%s\n", suffix.c_str(),
              median(times), build.fdes, build.rejected_fdes, rows, sizeof(FrameRow),
              build.table.memory_bytes() / 1024.0, build.error ? ", error: " : "", build.error ? build.error : "");
}

}  // namespace

int main(int argc, char** argv) {
  report_walks("through CFI-only frames", omit_fp_chain_a);
  report_walks("through frame-pointer frames", fp_chain_a);
  report_build("/libc.so.6");
  for (int i = 1; i < argc; ++i) {
    if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) == nullptr) {
      std::printf("dlopen %s: %s\n", argv[i], dlerror());
      continue;
    }
    std::string name = argv[i];
    report_build(name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/')));
  }
  return 0;
}
