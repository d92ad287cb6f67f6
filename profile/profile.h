// nmprof's in-memory profile: the processes of a recording, their sampled
// allocations summed by origin (stack, thread, context), what is live at the end,
// and the stacks. Frames and stacks are deduplicated by content, so equal stacks
// from different chunks share one id.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/jfr/nmprof_schema.h"
#include "profile/lifetimes.h"
#include "profile/live_tracker.h"
#include "profile/time_series.h"
#include "profile/totals.h"

namespace nmprof::profile {

enum class FrameKind : uint8_t {
  Native,  // machine code of a library or executable
  Cpp,     // JVM-internal native code
  Kernel,
  Interpreted,  // Java, and the JIT tiers below
  JitCompiled,
  Inlined,
  Java,        // a Java method whatever tier ran it (reports merge the three above)
  JavaNative,  // a Java method declared native
  Php,         // a PHP function: container is its file ("[internal function]" for built-ins)
};
// "native", "c++", "kernel", "interpreted", "jit", "inlined", "java", "java-native", "php".
const char* frame_kind_name(FrameKind kind);
bool is_java(FrameKind kind);
// Frames of a language runtime (Java, PHP), not machine code.
bool is_runtime_frame(FrameKind kind);

struct Frame {
  std::string function;   // native: symbol (demangled) or "lib.so+0x1a2b"; Java: method name
  std::string container;  // native: library basename; Java: class name with dots
  FrameKind kind = FrameKind::Native;
  int32_t line = -1;  // -1 when unknown
  std::string file;   // native: the source file, from the module's DWARF line table
  std::string signature = {};  // Java: the method's descriptor, "(I)V", which tells overloads apart
  // Native: code the compiler inlined into the next frame of the stack (its caller),
  // which is at the same return address.
  bool inlined = false;
  bool operator==(const Frame&) const = default;
};

struct Stack {
  std::vector<uint32_t> frames;  // frame ids, innermost first
  bool truncated = false;        // the producer's depth limit cut it
  bool operator==(const Stack&) const = default;
};

struct Thread {
  uint32_t process = 0;
  int64_t os_thread_id = 0;
  int64_t java_thread_id = 0;  // 0 for native threads
  std::string name;
  bool operator==(const Thread&) const = default;
};

// A counter of the profiler itself (nmprof.Statistics), e.g. lostSamples.
struct Statistic {
  std::string name;   // field name
  std::string label;  // display name, e.g. "Lost Samples"
  int64_t value = 0;
  bool bytes = false;  // the value is an amount of memory
};

// A library or executable of native frames (nmprof.Module), and which build of it
// the recording was made with.
struct ModuleFile {
  std::string path;
  // Hex, as recorded; read from the file when the recording is read for recordings
  // that do not say which build they were made with. "" when none.
  std::string build_id;
  // The recording says which build it was: its build id, else its file's size and
  // modification time when first seen.
  bool identified = false;
  uint64_t file_size = 0;
  int64_t file_modified_ns = 0;  // since the Unix epoch
  // Different builds under this name in one process (a library rebuilt and loaded
  // again): their frames cannot be told apart, so no file gives their lines.
  bool ambiguous = false;
  // Whether `other` describes the same build at the same path.
  bool same_build(const ModuleFile& other) const {
    return path == other.path && build_id == other.build_id && file_size == other.file_size &&
           file_modified_ns == other.file_modified_ns;
  }
};

struct Process {
  int64_t pid = 0;  // 0 when the recording does not say
  int64_t parent_pid = 0;
  std::string command;           // as the process was named at its end (it may retitle itself)
  std::string command_at_start;  // as it was named when its recording began
  std::string executable;
  std::string host_name;
  std::string agent_version;
  int64_t start_nanos = 0;  // the recorded span, ns since the Unix epoch
  int64_t end_nanos = 0;
  std::map<std::string, std::string> settings;  // the profiler's options, e.g. nativemem
  std::map<std::string, std::string> tags;      // the user's static tags (nmprof.Tag)
  std::map<std::string, ModuleFile> modules;   // by name, the "container" of native frames
  std::vector<Statistic> statistics;            // as of the last report of the process
  bool weighted = true;                         // false: its samples had no weight field, each counts once
  // Whether its reallocs counted the bytes they added (nmprof 0.2 on: profiler.Malloc
  // has previousSize) or their whole new size; unset without nmprof's profiler.Malloc.
  std::optional<bool> counts_realloc_growth;

  // The command, and the one it began with when it retitled itself:
  // "php-fpm: pool www (was php-fpm: master process (fpm.conf))".
  std::string title() const;
  const std::string* setting(const std::string& name) const;
  const Statistic* statistic(const std::string& name) const;
  // Mean bytes between samples (setting "nativemem"), when recorded.
  std::optional<uint64_t> sampling_interval() const;
  // Whether the profiler tracked frees (setting "live" = "true").
  bool live_tracking() const;
};

enum class AllocationSource : uint8_t {
  Native,    // profiler.Malloc: a sampled malloc/calloc/realloc/...
  JavaHeap,  // jdk.ObjectAllocationSample: a Java heap allocation sample
};

// Which allocator a native sample was made by (nmprof's profiler.Malloc field
// "allocator"; libc when a recording does not say).
// The values are the recording's keys (nmprof_schema.h).
enum class Allocator : uint8_t { Libc = jfr::schema::kLibc, ZendMM = jfr::schema::kZendMM };
constexpr int kAllocatorCount = jfr::schema::kAllocatorCount;
// "libc", "ZendMM".
const char* allocator_name(Allocator allocator);

// What the samples of one Allocation have in common: everything but when, where
// and how much.
struct SampleOrigin {
  uint32_t process = 0;
  uint32_t thread = 0;
  uint32_t stack = 0;
  AllocationSource source = AllocationSource::Native;
  Allocator allocator = Allocator::Libc;
  uint32_t context = 0;  // index into Profile::contexts(); 0: no attribute set
  uint64_t span_id = 0;  // 0: no span
  uint64_t local_root_span_id = 0;
  bool operator==(const SampleOrigin&) const = default;
};

// One sampled allocation as a recording holds it.
struct Sample : SampleOrigin {
  int64_t time_nanos = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  // A realloc's: the block's size before the call. The sample stands for the bytes
  // the call added (none when it shrank the block); the live view keeps the block.
  uint64_t before = 0;
  // Allocations this sample stands for (1/P(sampled)); added bytes * weight estimates bytes.
  float weight = 1;
  float live_weight = 0;  // blocks of its size it stands for in the live view; 0: weight
  // Allocated in an earlier chunk of a looping recording and still live
  // (profiler.LiveMalloc): in the live view, not in what this recording allocated.
  bool carried = false;

  Totals totals() const { return sample_totals(size > before ? size - before : 0, weight); }
  float weight_when_live() const { return live_weight ? live_weight : weight; }
};


// The samples of one origin, summed: a profile keeps these rather than every
// sample, so its size follows the stacks and contexts, not the length of the run.
struct Allocation : SampleOrigin {
  Totals allocated;
  Totals live;  // of those, the native samples not freed by the end of the recording
};

// A sample still live at the end of the recording (its age is what counts).
struct LiveSample {
  uint32_t allocation = 0;  // index into Profile::allocations()
  int64_t time_nanos = 0;
  Totals totals;
};


// The attribute values of a sample, by index into Profile::context_attributes ("" for
// none; missing trailing values are "").
struct Context {
  std::vector<std::string> values;
  bool operator==(const Context&) const = default;
};

class SampleSelector;

class Profile {
 public:
  std::vector<Process> processes;
  // The earliest start of a process's recording as recorded, once a time window
  // (--from) has moved the processes' starts: times are still told from it.
  std::optional<int64_t> recorded_start_nanos;
  std::vector<std::string> warnings;  // what reading the file could not do
  // Names of the context attributes of all processes, in the order first met.
  std::vector<std::string> context_attributes;

  // Adds a sample to its origin's sums (returns that Allocation's index, or
  // kNotKept when the selector turned it away); a native sample is live until freed.
  // A carried one (profiler.LiveMalloc) waits for the end of its file (end_file;
  // kNotKept).
  uint32_t add_allocation(const Sample& sample);
  static constexpr uint32_t kNotKept = UINT32_MAX;
  // A free of a sampled block (see LiveTracker for which allocation it frees, and
  // in_later_chunk).
  void add_free(uint32_t process, int64_t time_nanos, uint64_t address, const std::optional<Move>& moved = {},
                bool in_later_chunk = false);
  // The files of a looping recording's chunks are read one after another, in time
  // order, each between begin_file() and end_file(): a block a file carries
  // (profiler.LiveMalloc) that an earlier file allocated is not counted twice, and one
  // that a later file neither carries nor frees was freed in a chunk not read.
  // `processes`: those the file holds; it covers [start_nanos, end_nanos). A file cut
  // short (not `complete`) restates only some of its blocks, and one that goes on past
  // what the selector keeps has frees it turned away: neither tells of blocks freed in
  // a chunk not read.
  void begin_file() { live_.begin_file(); }
  void end_file(const std::vector<uint32_t>& processes, int64_t start_nanos, int64_t end_nanos, bool complete);
  // No sample or free of `process` older than `time_nanos` is still to come: those
  // that came out of time order after it wait to be paired (LiveTracker).
  void hold_from(uint32_t process, int64_t time_nanos);
  // Every sample and free is in: what waited is paired.
  void settle();
  // Lets `selector` (or nobody: nullptr) choose the samples and frees taken in from now on.
  void set_selector(SampleSelector* selector) { selector_ = selector; }
  const std::vector<Allocation>& allocations() const { return allocations_; }
  // Points every allocation at stack `new_stack(old)` (stacks simplified for display);
  // origins may then repeat, which sums over them do not mind.
  void map_stacks(const std::function<uint32_t(uint32_t)>& new_stack);
  // The samples live at the end, oldest first.
  std::vector<LiveSample> live_samples() const;
  // Frees that freed a sampled allocation, and frees of blocks the recording never
  // saw allocated.
  uint64_t matched_frees() const { return live_.matched_frees(); }
  uint64_t unmatched_frees() const { return live_.unmatched_frees(); }
  uint64_t frees_of_earlier_chunks() const { return live_.frees_of_earlier_chunks(); }
  // Bytes allocated, and live bytes, over time (of the samples and frees taken in).
  const TimeSeries& time_series() const { return time_series_; }
  // When the sampled blocks of each allocation were allocated and freed, in time bins.
  const Lifetimes& lifetimes() const { return lifetimes_; }

  uint32_t add_frame(const Frame& frame);
  uint32_t add_stack(const Stack& stack);
  uint32_t add_thread(const Thread& thread);
  uint32_t add_context(const Context& context);  // the empty context is 0
  // The value of attribute `name` in a context; "" when not set or not declared.
  const std::string& attribute(uint32_t context, std::string_view name) const;
  const std::vector<Frame>& frames() const { return frames_; }
  const std::vector<Stack>& stacks() const { return stacks_; }
  const std::vector<Thread>& threads() const { return threads_; }
  const std::vector<Context>& contexts() const { return contexts_; }

 private:
  struct Hash {
    size_t operator()(const Frame& f) const;
    size_t operator()(const Stack& s) const;
    size_t operator()(const Thread& t) const;
    size_t operator()(const Context& c) const;
    size_t operator()(const SampleOrigin& o) const;
  };
  // After settle(): what each process left live when its recording ended leaves the live series.
  void leave_at_exit();
  // Applies what pairing did to the live sums and the time series.
  void live_changed(const LiveTracker::Block& block, std::optional<int64_t> freed_at);
  LiveTracker::Changes live_changes() {
    return [this](const LiveTracker::Block& block, std::optional<int64_t> freed_at) { live_changed(block, freed_at); };
  }

  // Sums the sample (add_allocation, once a carried one's turn has come).
  uint32_t take(const Sample& sample);

  std::vector<Allocation> allocations_;
  std::unordered_map<SampleOrigin, uint32_t, Hash> allocation_ids_;
  std::vector<Sample> carried_;  // of the file being read (see end_file)
  LiveTracker live_;
  SampleSelector* selector_ = nullptr;
  TimeSeries time_series_;
  Lifetimes lifetimes_;
  std::vector<Frame> frames_;
  std::vector<Stack> stacks_;
  std::vector<Thread> threads_;
  std::vector<Context> contexts_{Context{}};
  std::unordered_map<Frame, uint32_t, Hash> frame_ids_;
  std::unordered_map<Stack, uint32_t, Hash> stack_ids_;
  std::unordered_map<Thread, uint32_t, Hash> thread_ids_;
  std::unordered_map<Context, uint32_t, Hash> context_ids_{{Context{}, 0}};
};

}  // namespace nmprof::profile
