// The JFR type system nmprof writes: standard JDK types (threads, stacks, methods,
// classes) plus the profiler.Malloc / profiler.Free events and nmprof's own
// recording-description events. Readers look everything up by name; these ids are
// only what nmprof's writer uses.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "formats/jfr/metadata.h"

namespace nmprof::jfr::schema {

enum TypeId : uint64_t {
  kBoolean = 4,
  kFloat = 6,
  kInt = 10,
  kLong = 11,
  kString = 20,
  kClass = 21,
  kThread = 22,
  kClassLoader = 23,
  kFrameType = 24,
  kStackTrace = 26,
  kStackFrame = 27,
  kMethod = 28,
  kPackage = 30,
  kSymbol = 31,
  kAllocator = 40,

  kMallocEvent = 120,
  kFreeEvent = 121,
  kProcessEvent = 122,
  kSettingEvent = 123,
  kStatisticsEvent = 124,
  kTagEvent = 125,
  kModuleEvent = 126,
  kLiveMallocEvent = 119,  // below 128: its id is one byte, as profiler.Malloc's (chunk_window.h)
  // Declared by no metadata, so that every reader skips it: records a looping session
  // has dropped from a recording (cli/chunks/punched_records.h).
  kDroppedRecords = 99,

  kLabel = 201,
  kCategory = 202,
  kContentType = 203,
  kTimestamp = 204,
  kTimespan = 205,
  kDataAmount = 206,
  kMemoryAddress = 207,
  kUnsigned = 208,
  kDescription = 209,
};

// Keys of the jdk.types.FrameType pool, with the JDK's and JMC's descriptions.
enum FrameTypeKey : uint8_t {
  kInterpreted = 0,
  kJitCompiled = 1,
  kInlined = 2,
  kNative = 3,
  kCpp = 4,
  kKernel = 5,
  kC1Compiled = 6,
  kPhp = 7,  // a PHP function (user code or internal), file and line in its method and frame
};
const char* frame_type_name(FrameTypeKey key);
constexpr int kFrameTypeCount = 8;
// The key a frame type's name stands for; nothing for a name nmprof does not write.
std::optional<FrameTypeKey> frame_type_key(std::string_view name);

// Keys of the nmprof.types.Allocator pool: which allocator a profiler.Malloc sampled.
enum AllocatorKey : uint8_t {
  kLibc = 0,    // malloc and friends, of whatever library the GOT slot was bound to
  kZendMM = 1,  // PHP's request heap (emalloc and friends)
};
const char* allocator_name(AllocatorKey key);
constexpr int kAllocatorCount = 2;
// The key an allocator's name stands for; nothing for a name nmprof does not write.
std::optional<AllocatorKey> allocator_key(std::string_view name);

// nmprof.Statistics' stoppedGrowing: why the file stopped growing (later samples are
// missing from it).
enum StopReason : uint8_t {
  kGrowing = 0,            // in the last write of a process image: the recording went on to its end
  kMaxSizeReached = 1,     // --max-size
  kDiskNearlyFull = 2,     // the host is left 1% of the disk, at most 64 MiB
  kProcessFileLimit = 3,   // ulimit -f (writing past it would kill the process)
  // Every other write: in the last statistics of a file, the recording ends before its
  // process did (killed, still running, or the agent lost its file).
  kBeforeTheEnd = 4,
  // The program put itself under a seccomp filter, which may kill it for a system
  // call it did not plan for: the agent ended the recording there.
  kSeccompFilter = 5,
  // The agent could not get memory for what it records (the process's address space
  // is exhausted: ulimit -v): it ended the recording after its last complete write.
  kOutOfMemory = 6,
  // The last write of a process image that exec'd another program: in the last
  // statistics of a file, that program left no recording (statically linked, setuid,
  // started without the agent, or killed before it wrote).
  kExeced = 7,
  // A write at the end of a server's request (PHP's): more writes may come, but one
  // that stays the last is of a worker killed while idle between requests (php-fpm's
  // master kills its workers at a stop), which lost nothing of a request.
  kBetweenRequests = 8,
};
// "it reached --max-size", ...; null for kGrowing, kBetweenRequests (nothing was lost)
// and unknown values.
const char* stop_reason_text(uint64_t reason);

// JVM access flag that marks native methods; nmprof gives it to native frames.
constexpr int kAccNative = 0x100;

// Event and field names shared by the writer and the profile reader.
inline constexpr const char* kMallocName = "profiler.Malloc";
inline constexpr const char* kFreeName = "profiler.Free";
inline constexpr const char* kProcessName = "nmprof.Process";
inline constexpr const char* kSettingName = "jdk.ActiveSetting";
inline constexpr const char* kStatisticsName = "nmprof.Statistics";
inline constexpr const char* kTagName = "nmprof.Tag";
// The setting a chunk of run --loop carries for each process image in it: whether the
// process ran on past the chunk's end (its last statistics then say kBeforeTheEnd,
// which is no loss), or ended in it.
inline constexpr const char* kChunkSetting = "chunk";
inline constexpr const char* kChunkRunsOn = "runs on";
inline constexpr const char* kChunkEnded = "ended";
inline constexpr const char* kSpanIdField = "spanId";
inline constexpr const char* kLocalRootSpanIdField = "localRootSpanId";
// profiler.Malloc of a realloc: the block's size before the call (the sample stands
// for what it added), and the weight of the whole block in the live view.
inline constexpr const char* kPreviousSizeField = "previousSize";
inline constexpr const char* kLiveWeightField = "liveWeight";
// profiler.Free of a realloc that moved or resized a tracked block without a sample
// of its own: where it lives on, its new size and live weight (0: a free).
inline constexpr const char* kNewAddressField = "newAddress";
inline constexpr const char* kNewSizeField = "newSize";
inline constexpr const char* kNewWeightField = "newWeight";
inline constexpr const char* kModuleName = "nmprof.Module";
// A profiler.Malloc of an earlier chunk of a looping recording (--loop) whose block is
// still live: the same fields, in the live view only (chunk_window.h).
inline constexpr const char* kLiveMallocName = "profiler.LiveMalloc";

// The complete metadata of an nmprof recording whose profiler.Malloc events carry no
// context attributes.
const Metadata& nmprof_metadata();
// The same, with one java.lang.String field per context attribute after
// localRootSpanId, named as declared, in that order.
Metadata nmprof_metadata(std::span<const std::string> context_attributes);
// Whether profiler.Malloc has a field of its own (not an attribute) of this name: an
// attribute cannot take it.
bool is_malloc_field(std::string_view name);

}  // namespace nmprof::jfr::schema
