#include "cli/options/recording_options.h"

#include <string>

namespace nmprof::cli {

void add_recording_options(CLI::App* command, RecordingOptions& options) {
  command
      ->add_option("--nativemem", options.interval,
                   "Mean bytes between samples (k/m/g suffixes; 0 records every allocation)")
      ->default_val(options.interval);
  command
      ->add_option("--rate", options.rate,
                   "Hold about this many samples per second by adapting the interval around --nativemem "
                   "(0: fixed interval, the default)")
      ->check(CLI::Range(uint64_t{0}, kMaxRate).description(""))
      ->type_name("N");
  command->add_option("--stackdepth", options.stack_depth, "Maximum frames per stack (default 128)")
      ->check(CLI::Range(1u, kMaxStackDepth).description(""))  // --help shows the range as the value's name
      ->type_name("1-" + std::to_string(kMaxStackDepth));
  command->add_flag("--no-live", options.no_live, "Do not track frees of sampled blocks (no live-memory view)");
  command
      ->add_option("--maxtracked", options.max_tracked,
                   "Sampled blocks tracked at once (default 262144; 16777216 at --nativemem 0)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32).description(""))
      ->type_name("N");
  command->add_option("--max-size", options.max_size,
                      "The recording stops growing at this size (k/m/g suffixes, at least 64k; 0: only the "
                      "disk's free space limits it)")
      ->type_name("SIZE");
  command->add_option("--tag", options.tags, "KEY=VALUE describing the whole recording (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--context-attributes", options.context_attributes,
                      "NAME,NAME: per-thread context attributes every sample carries (at most 8; set with nmprof.h)");
}

bool to_agent_options(const RecordingOptions& options, AgentOptions* agent, std::string* error) {
  auto interval = parse_size(options.interval);
  if (!interval) {
    *error = "bad --nativemem '" + options.interval + "' (examples: 512k, 1m, 0)";
    return false;
  }
  agent->interval = *interval;
  agent->rate = options.rate;
  if (options.stack_depth) agent->stack_depth = options.stack_depth;
  agent->live = !options.no_live;
  if (options.max_tracked) agent->max_tracked = options.max_tracked;
  auto max_size = parse_size(options.max_size);
  if (!max_size || (*max_size != 0 && *max_size < kMinMaxSize)) {
    *error = "bad --max-size '" + options.max_size + "' (at least " + format_size(kMinMaxSize) +
             ", e.g. 100m; 0 for no limit)";
    return false;
  }
  agent->max_size = *max_size;
  for (const std::string& text : options.tags) {
    Tag tag;
    if (auto bad = parse_tag(text, &tag)) {
      *error = "--tag: " + *bad;
      return false;
    }
    agent->tags.push_back(std::move(tag));
  }
  if (options.context_attributes) {
    if (auto bad = parse_context_attributes(*options.context_attributes, ',', &agent->context_attributes)) {
      *error = "--context-attributes: " + *bad;
      return false;
    }
  }
  return true;
}

}  // namespace nmprof::cli
