// The agent's option string: comma-separated key=value pairs, the same syntax for
// NMPROF_OPTIONS (LD_PRELOAD), -agentpath:libnmprof.so=<options> and attach.
// In a value, a backslash makes the next ',', '=' or '\\' part of it (other
// backslashes are themselves); format_agent_options escapes every value, so that
// no path can add or change an option. By hand, a comma followed by something that
// is not an option name also belongs to a file= path.
// The CLI links this too, so both sides agree on names, defaults and errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nmprof {

// The environment variable that hands the option string to a preloaded agent (nmprof run).
constexpr char kOptionsVariable[] = "NMPROF_OPTIONS";

constexpr uint64_t kDefaultInterval = 512 * 1024;
constexpr unsigned kDefaultStackDepth = 128;
constexpr unsigned kMaxStackDepth = 2048;
constexpr uint64_t kDefaultMaxTracked = 262144;
// Recording every allocation (nativemem=0) tracks every live block: ordinary programs
// hold half a million. The table grows with them (about 100 to 200 bytes a block),
// up to this many.
constexpr uint64_t kEveryAllocationMaxTracked = uint64_t{1} << 24;
constexpr uint64_t kMaxRate = 1000000;  // samples per second that --rate may ask for
constexpr size_t kMaxContextAttributes = 8;  // as many as nmprof.h's context block holds
constexpr size_t kMaxAttributeNameLength = 63;
constexpr uint64_t kMinMaxSize = 64 * 1024;  // a smaller file could not hold the recording's metadata

using Tag = std::pair<std::string, std::string>;

struct AgentOptions {
  uint64_t interval = kDefaultInterval;  // mean bytes between samples; 0 records every allocation
  uint64_t rate = 0;  // samples per second to hold by adapting the interval (rate_limit.h); 0: fixed
  std::string file;                      // output path template: %p pid, %t start time, %% percent
  unsigned stack_depth = kDefaultStackDepth;
  bool live = true;                        // track frees of sampled blocks (heap-live)
  uint64_t max_tracked = 0;  // sampled blocks tracked at once; 0: tracked_blocks_cap()'s default
  uint64_t max_size = 0;  // bytes the output file stops growing at; 0: no limit but the disk's
  // run: the file the user gets the recording in (-o, when it names one file), which
  // the agent's lines name rather than the staging file it writes.
  std::string output;
  std::string reply;  // attach: where the agent writes its answer (attach_request.h)
  // Static tags of the whole recording (service, env, ...): one tag=KEY=VALUE option each.
  std::vector<Tag> tags;
  // Names of the per-thread context attributes: attributes=NAME;NAME.
  std::vector<std::string> context_attributes;
  std::string token;  // attach: nmprof's random token, echoed in the answer
  // The seccomp filters a process may run under and still be recorded: as many as
  // `nmprof run` found its own process under and checked that the agent's system
  // calls pass (seccomp_probe.h). A process under more stays unrecorded: a filter
  // may kill it for a system call it did not plan for.
  unsigned seccomp_checked = 0;
  // nmprof run's broker (recording_broker.h): the inherited socket's number as nmprof
  // left it, and its inode, which tells it wherever the program moved it. 0: none.
  int broker_fd = -1;
  uint64_t broker_inode = 0;
  // Preloaded: a process of the agent's finishes the recording of a program that ends
  // without running the agent's code (agent/safety/exit_watch.h); the launcher then
  // waits for it (common/exit_watch_lock.h) before reading the file.
  bool exit_watch = false;
};

// How many sampled blocks are tracked at once: max_tracked when given, else
// kDefaultMaxTracked, or kEveryAllocationMaxTracked when every allocation is recorded.
uint64_t tracked_blocks_cap(const AgentOptions& options);

// Parses "512k", "1m", "2g", "4096" (binary units, case-insensitive, optional "b"/"ib").
std::optional<uint64_t> parse_size(std::string_view text);
// Formats a byte count the way parse_size reads it back ("512k", "1m", "1000").
std::string format_size(uint64_t bytes);

// Parses an option string into `options` (unnamed keys keep their defaults).
// Returns an error message naming the bad option, or nothing on success.
std::optional<std::string> parse_agent_options(std::string_view text, AgentOptions& options);
std::string format_agent_options(const AgentOptions& options);
// `value` with ',', '=' and '\\' escaped by a backslash.
std::string escape_option_value(std::string_view value);

// "KEY=VALUE" with a non-empty KEY; returns an error message, or nothing and sets *tag.
std::optional<std::string> parse_tag(std::string_view text, Tag* tag);
// Names of context attributes, separated by `separator`: at most 8, each a Java
// identifier (they become JFR field names), no duplicates, none of profiler.Malloc's
// own fields. Returns an error message, or nothing and sets *names.
std::optional<std::string> parse_context_attributes(std::string_view text, char separator,
                                                    std::vector<std::string>* names);

// `when` as %t shows it: yyyymmdd-hhmmss, local time. Takes libc's time zone lock:
// the agent calls it only when it starts, never from a hook or after fork().
std::string local_time_text(long when);
// Expands %p (pid), %t (`time_text`) and %% in a path.
std::string expand_path_template(std::string_view pattern, long pid, std::string_view time_text);

}  // namespace nmprof
