#include "cli/options/loop_options.h"

#include "cli/options/count_check.h"
#include "cli/options/seconds_option.h"
#include "cli/chunks/chunk_path.h"

namespace nmprof::cli {
namespace {

constexpr double kMaxLoopSeconds = 7 * 24 * 3600;  // a chunk a week
constexpr uint64_t kMaxKeptChunks = 1000000;

}  // namespace

void add_loop_options(CLI::App* command, LoopOptions& options) {
  add_duration_option(command, "--loop", options.seconds, {1, kMaxLoopSeconds},
                      "Close the recording every DURATION (90s, 10m) and begin the next: a file per chunk (-o with "
                      "%n or %t)");
  command->add_option("--keep", options.keep, "With --loop: keep the newest N chunk files (default: all)")
      ->check(count_check(1, kMaxKeptChunks, "chunks"))
      ->type_name("N");
}

std::string loop_problem(const LoopOptions& options, const std::string& output) {
  if (!options.seconds) return options.keep ? "--keep N keeps the newest N chunks of --loop: give --loop" : "";
  if (!names_each_chunk(output))
    return "--loop writes a file per chunk: -o needs %n (the chunk's number) or %t (its start time), e.g. -o "
           "app-%n.jfr";
  return "";
}

uint64_t chunk_size_limit(const LoopOptions& options, AgentOptions& agent) {
  if (!options.seconds) return 0;
  uint64_t limit = agent.max_size;
  agent.max_size = 0;
  return limit;
}

}  // namespace nmprof::cli
