#include "profile/jfr_profile.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "formats/jfr/reading/recording_file.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/reading/recording.h"
#include "profile/earliest_ahead.h"
#include "profile/jfr_stacks.h"

namespace nmprof::profile {
namespace {

using jfr::Chunk;
using jfr::Event;
using jfr::FieldBinding;
using jfr::Type;
using jfr::Value;
namespace schema = jfr::schema;

constexpr const char* kJavaSampleName = "jdk.ObjectAllocationSample";
constexpr const char* kJvmInformationName = "jdk.JVMInformation";

// Slots of the fields read from sample events, in binding order.
// Context attribute fields follow the fixed slots of profiler.Malloc.
enum MallocSlot {
  kMallocTime,
  kMallocThread,
  kMallocStack,
  kMallocAddress,
  kMallocSize,
  kMallocWeight,
  kMallocAllocator,
  kMallocSpan,
  kMallocRootSpan,
  kMallocBefore,      // a realloc's block size before the call (absent before nmprof 0.2: 0)
  kMallocLiveWeight,  // (absent: the weight)
  kMallocSlots
};
// newAddress, newSize, newWeight: a realloc that moved the block (absent, or 0: a free).
enum FreeSlot { kFreeTime, kFreeAddress, kFreeNewAddress, kFreeNewSize, kFreeNewWeight, kFreeSlots };
enum JavaSlot { kJavaTime, kJavaThread, kJavaStack, kJavaWeight, kJavaSlots };

// The counters of an nmprof.Statistics event, whatever fields this version has.
std::vector<Statistic> statistics_of(const Type& type, const Value& event) {
  static const std::string_view kNotCounters[] = {"startTime", "duration", "eventThread", "stackTrace"};
  std::vector<Statistic> stats;
  for (size_t i = 0; i < type.fields.size(); i++) {
    const jfr::Field& f = type.fields[i];
    const Value& v = event.elements()[i];
    if (v.kind() != Value::Kind::Integer ||
        std::find(std::begin(kNotCounters), std::end(kNotCounters), f.name) != std::end(kNotCounters))
      continue;
    const jfr::Annotation* label = f.annotation("jdk.jfr.Label");
    const jfr::Annotation* amount = f.annotation("jdk.jfr.DataAmount");
    stats.push_back({f.name, label ? label->value : f.name, v.integer(), amount && amount->value == "BYTES"});
  }
  return stats;
}

// A module of a process: a name that is met again must be the same build, or its
// frames (named by module name) cannot be told apart.
void add_module(std::map<std::string, ModuleFile>& modules, const std::string& name, ModuleFile module) {
  auto [it, added] = modules.try_emplace(name, module);
  if (added) return;
  if (module.identified && it->second.identified && !it->second.same_build(module))
    it->second.ambiguous = true;
  else if (!it->second.ambiguous)
    it->second = std::move(module);
}

// An nmprof.Module event; the build it describes when the recording says.
ModuleFile module_file(const Chunk& chunk, const Type& type, const Value& event) {
  ModuleFile m;
  m.path = text_of(chunk, event.field("path"));
  m.identified = type.field_index("buildId") >= 0;
  m.build_id = text_of(chunk, event.field("buildId"));
  m.file_size = static_cast<uint64_t>(event.field("fileSize").integer());
  m.file_modified_ns = event.field("fileModified").integer();
  return m;
}

class ProfileBuilder {
 public:
  ProfileBuilder(Profile& profile, NativeLines lines) : profile_(profile), lines_(lines) {}

  void add(const Chunk& chunk) {
    EarliestAhead earliest;
    int64_t image = 0;
    Process described = describe(chunk, earliest, &image);
    if (image > described.start_nanos && image < described.end_nanos) described.start_nanos = image;
    uint32_t process = process_index(std::move(described), image);
    if (std::find(file_processes_.begin(), file_processes_.end(), process) == file_processes_.end())
      file_processes_.push_back(process);
    const jfr::ChunkHeader& header = chunk.header();
    file_start_ = std::min(file_start_, header.start_nanos);
    earlier_files_end_.resize(profile_.processes.size(), INT64_MIN);
    file_end_.resize(profile_.processes.size(), INT64_MIN);
    if (header.start_nanos < earlier_files_end_[process]) overlapping_pid_ = profile_.processes[process].pid;
    file_end_[process] = std::max(file_end_[process], header.start_nanos + header.duration_nanos);
    reading_samples_ = true;
    // A chunk that begins after its process's recording did is a later chunk of a
    // looping recording: blocks of earlier chunks are freed in it.
    read_samples(chunk, process, earliest, image != 0 && header.start_nanos > image);
    reading_samples_ = false;
  }
  // Each file between these two (Profile::begin_file).
  void begin_file() {
    profile_.begin_file();
    file_processes_.clear();
    file_start_ = INT64_MAX;
    overlapping_pid_.reset();
  }
  // `complete`: the file was read to its end without damage.
  void end_file(bool complete) {
    int64_t file_end = INT64_MIN;
    for (uint32_t process : file_processes_) file_end = std::max(file_end, file_end_[process]);
    profile_.end_file(file_processes_, file_start_, file_end, complete);
    for (size_t i = 0; i < file_end_.size(); i++) earlier_files_end_[i] = std::max(earlier_files_end_[i], file_end_[i]);
  }
  // A process of the file just read whose time an earlier file covers too (a chunk
  // and the whole recording it was cut from, given together).
  std::optional<int64_t> overlapping_pid() const { return overlapping_pid_; }
  // Whether the pass over the chunk's events now is the one that reads the samples
  // (the last and longest one).
  bool reading_samples() const { return reading_samples_; }

  // Pairs the frees that waited; build ids of module files that the recording does
  // not give, for outputs that name them (pprof mappings).
  void finish() {
    profile_.settle();
    for (auto& p : profile_.processes)
      for (auto& [name, module] : p.modules)
        if (!module.identified) module.build_id = source_lines_.build_id(module.path);
  }
  // Module files that are not the builds recorded.
  const std::vector<std::string>& warnings() const { return source_lines_.warnings(); }

 private:
  // What the chunk says about its process: nmprof.Process (or the JDK's
  // jdk.JVMInformation), the profiler's settings and its last statistics; and when
  // its samples and frees were made.
  // *image: when the process image's recording began (nmprof.Process's time), which
  // tells apart the images of one pid (exec, a restarted recording); 0 when unknown.
  Process describe(const Chunk& chunk, EarliestAhead& earliest, int64_t* image) {
    const auto& types = chunk.types();
    const Type* process_type = types.find(schema::kProcessName);
    const Type* jvm_type = types.find(kJvmInformationName);
    const Type* setting_type = types.find(schema::kSettingName);
    const Type* statistics_type = types.find(schema::kStatisticsName);
    const Type* tag_type = types.find(schema::kTagName);
    const Type* module_type = types.find(schema::kModuleName);
    const Type* malloc_type = types.find(schema::kMallocName);
    const Type* live_malloc_type = types.find(schema::kLiveMallocName);
    const Type* free_type = types.find(schema::kFreeName);
    FieldBinding malloc_time, live_malloc_time, free_time;
    if (malloc_type) malloc_time = FieldBinding(*malloc_type, {"startTime"});
    if (live_malloc_type) live_malloc_time = FieldBinding(*live_malloc_type, {"startTime"});
    if (free_type) free_time = FieldBinding(*free_type, {"startTime"});

    Process p;
    p.start_nanos = chunk.header().start_nanos;
    p.end_nanos = chunk.header().start_nanos + chunk.header().duration_nanos;
    bool identified = false;
    chunk.for_each_event([&](const Event& e) {
      const Type* type = &e.type();
      if (type == malloc_type || type == live_malloc_type || type == free_type) {
        earliest.add(time_of(chunk, e, type == malloc_type ? malloc_time
                                       : type == free_type ? free_time
                                                           : live_malloc_time));
      } else if (type == process_type && !identified) {
        Value v = e.value();
        p.pid = v.field("pid").integer();
        p.parent_pid = v.field("parentPid").integer();
        p.command = text_of(chunk, v.field("commandLine"));
        p.command_at_start = p.command;
        p.executable = text_of(chunk, v.field("executable"));
        p.host_name = text_of(chunk, v.field("hostName"));
        p.agent_version = text_of(chunk, v.field("agentVersion"));
        *image = chunk.header().ticks_to_nanos(v.field("startTime").integer());
        identified = true;
      } else if (type == process_type) {  // written again by a process that retitled itself
        p.command = text_of(chunk, e.value().field("commandLine"));
      } else if (type == jvm_type && !identified) {
        Value v = e.value();
        p.pid = v.field("pid").integer();
        p.command = "java " + text_of(chunk, v.field("javaArguments"));
        p.command_at_start = p.command;
        p.executable = "java";
        identified = true;
      } else if (type == setting_type) {
        Value v = e.value();
        // The JDK records a setting per event type (enabled, threshold, ...) under that
        // type's id; those configure the JDK's events, not a profiler.
        const Type* configured = types.find(static_cast<uint64_t>(v.field("id").integer()));
        if (configured && configured->is_event() && configured->name.starts_with("jdk.")) return;
        p.settings[text_of(chunk, v.field("name"))] = text_of(chunk, v.field("value"));
      } else if (type == statistics_type) {
        p.statistics = statistics_of(*type, e.value());
      } else if (type == tag_type) {
        Value v = e.value();
        p.tags[text_of(chunk, v.field("key"))] = text_of(chunk, v.field("value"));
      } else if (type == module_type) {
        Value v = e.value();
        add_module(p.modules, text_of(chunk, v.field("name")), module_file(chunk, *type, v));
      }
    });
    earliest.finish();
    return p;
  }

  // When a sample or free was made; a damaged one (the pass that reads the samples
  // says so) comes before none.
  static int64_t time_of(const Chunk& chunk, const Event& e, const FieldBinding& time_binding) {
    Value time;
    try {
      e.read(time_binding, {&time, 1});
    } catch (const jfr::FormatError&) {
      return INT64_MAX;
    }
    return chunk.header().ticks_to_nanos(time.integer());
  }

  // Chunks of one recorded process image (same pid, same image start) share one
  // entry: an image that exec'd another, or a recording started again, keeps its own
  // statistics (each counts from its start) and modules. JDK recordings say no image:
  // their chunks share the pid's entry; chunks that do not say which process they
  // come from share the entry with pid 0.
  uint32_t process_index(Process described, int64_t image) {
    auto& processes = profile_.processes;
    size_t same = 0;
    while (same < processes.size() && (processes[same].pid != described.pid || images_[same] != image)) same++;
    if (same == processes.size()) {
      processes.push_back(std::move(described));
      images_.push_back(image);
      return static_cast<uint32_t>(processes.size() - 1);
    }
    Process& p = processes[same];
    p.start_nanos = std::min(p.start_nanos, described.start_nanos);
    p.end_nanos = std::max(p.end_nanos, described.end_nanos);
    for (auto [mine, theirs] : {std::pair{&p.command, &described.command},
                                {&p.command_at_start, &described.command_at_start},
                                {&p.executable, &described.executable},
                                {&p.host_name, &described.host_name},
                                {&p.agent_version, &described.agent_version}})
      if (mine->empty()) *mine = std::move(*theirs);
    if (!p.parent_pid) p.parent_pid = described.parent_pid;
    for (auto& [name, value] : described.settings) p.settings[name] = std::move(value);
    for (auto& [key, value] : described.tags) p.tags[key] = std::move(value);
    for (auto& [name, module] : described.modules) add_module(p.modules, name, std::move(module));
    if (!described.statistics.empty()) p.statistics = std::move(described.statistics);
    return static_cast<uint32_t>(same);
  }

  // The profile-wide attribute index of each String field of profiler.Malloc (its
  // context attributes); their names are appended to `names` after the fixed fields.
  std::vector<size_t> context_attributes(const Type& malloc_type, std::vector<std::string_view>& names) {
    std::vector<size_t> indexes;
    auto& known = profile_.context_attributes;
    for (const jfr::Field& f : malloc_type.fields) {
      if (!f.type || f.type->name != "java.lang.String" || f.array) continue;
      auto it = std::find(known.begin(), known.end(), f.name);
      if (it == known.end()) it = known.insert(known.end(), f.name);
      indexes.push_back(static_cast<size_t>(it - known.begin()));
      names.push_back(f.name);
    }
    return indexes;
  }

  void read_samples(const Chunk& chunk, uint32_t process, const EarliestAhead& earliest, bool later_chunk) {
    const auto& types = chunk.types();
    const Type* malloc_type = types.find(schema::kMallocName);
    const Type* live_malloc_type = types.find(schema::kLiveMallocName);
    const Type* free_type = types.find(schema::kFreeName);
    const Type* java_type = types.find(kJavaSampleName);
    FieldBinding mallocs, live_mallocs, frees, java_samples;
    std::vector<std::string_view> malloc_fields = {"startTime", "eventThread", "stackTrace",
                                                   "address",   "size",        "weight",
                                                   "allocator", schema::kSpanIdField, schema::kLocalRootSpanIdField,
                                                   schema::kPreviousSizeField, schema::kLiveWeightField};
    std::vector<size_t> attributes;
    if (malloc_type) {
      attributes = context_attributes(*malloc_type, malloc_fields);
      mallocs = FieldBinding(*malloc_type, malloc_fields);
    }
    // The same fields as profiler.Malloc's (nmprof_schema.cpp).
    if (live_malloc_type) live_mallocs = FieldBinding(*live_malloc_type, malloc_fields);
    if (free_type)
      frees = FieldBinding(*free_type, {"startTime", "address", schema::kNewAddressField, schema::kNewSizeField,
                                        schema::kNewWeightField});
    if (java_type) java_samples = FieldBinding(*java_type, {"startTime", "eventThread", "stackTrace", "weight"});
    // async-profiler's profiler.Malloc has no weight: each sample counts once.
    bool weighted = !malloc_type || mallocs.has(kMallocWeight);
    if (!weighted) profile_.processes[process].weighted = false;
    // (Only nmprof's events are weighted: another profiler's count reallocs their own way.)
    if (malloc_type && weighted) profile_.processes[process].counts_realloc_growth = mallocs.has(kMallocBefore);

    const auto& header = chunk.header();
    StackResolver stacks(chunk, profile_, profile_.processes[process],
                         lines_ == NativeLines::Resolve ? &source_lines_ : nullptr);
    std::unordered_map<uint64_t, uint32_t> threads;  // by pool key
    auto thread = [&](const Value& reference) {
      auto memo = threads.find(reference.key());
      if (memo != threads.end()) return memo->second;
      Value t = chunk.resolve(reference);
      std::string name = text_of(chunk, t.field("javaName"));
      if (name.empty()) name = text_of(chunk, t.field("osName"));
      uint32_t id = profile_.add_thread(
          {process, t.field("osThreadId").integer(), t.field("javaThreadId").integer(), std::move(name)});
      threads.emplace(reference.key(), id);
      return id;
    };

    std::unordered_map<uint64_t, Allocator> allocators;  // by pool key
    auto allocator = [&](const Value& reference) {
      auto memo = allocators.find(reference.key());
      if (memo != allocators.end()) return memo->second;
      auto key = jfr::schema::allocator_key(text_of(chunk, reference));
      Allocator a = static_cast<Allocator>(key.value_or(jfr::schema::kLibc));
      return allocators.emplace(reference.key(), a).first->second;
    };

    int64_t last_event = profile_.processes[process].end_nanos;
    std::vector<Value> slots(malloc_fields.size());
    Context context;
    size_t native_events = 0;  // samples and frees, counted as EarliestAhead counts them
    chunk.for_each_event([&](const Event& e) {
      const Type* type = &e.type();
      if (type == malloc_type || type == live_malloc_type || type == free_type) {
        // What came before the earliest event still to come can be paired.
        if (EarliestAhead::block_begins(native_events)) profile_.hold_from(process, earliest.from(native_events));
        native_events++;
      }
      if (type == malloc_type || (type == live_malloc_type && malloc_type)) {
        e.read(type == malloc_type ? mallocs : live_mallocs, slots);
        Sample a;
        a.carried = type == live_malloc_type;
        a.time_nanos = header.ticks_to_nanos(slots[kMallocTime].integer());
        a.thread = thread(slots[kMallocThread]);
        a.stack = stacks.stack(slots[kMallocStack]);
        a.address = static_cast<uint64_t>(slots[kMallocAddress].integer());
        a.size = static_cast<uint64_t>(slots[kMallocSize].integer());
        a.weight = weighted ? static_cast<float>(slots[kMallocWeight].number()) : 1.0f;
        a.before = static_cast<uint64_t>(slots[kMallocBefore].integer());
        a.live_weight = static_cast<float>(slots[kMallocLiveWeight].number());
        if (mallocs.has(kMallocAllocator)) a.allocator = allocator(slots[kMallocAllocator]);
        a.span_id = static_cast<uint64_t>(slots[kMallocSpan].integer());
        a.local_root_span_id = static_cast<uint64_t>(slots[kMallocRootSpan].integer());
        if (!attributes.empty()) {
          context.values.assign(profile_.context_attributes.size(), std::string());
          for (size_t i = 0; i < attributes.size(); i++)
            if (slots[kMallocSlots + i].kind() == Value::Kind::String)
              context.values[attributes[i]] = slots[kMallocSlots + i].string();
          a.context = profile_.add_context(context);
        }
        a.process = process;
        profile_.add_allocation(a);
        last_event = std::max(last_event, a.time_nanos);
      } else if (type == free_type) {
        e.read(frees, {slots.data(), kFreeSlots});
        int64_t time = header.ticks_to_nanos(slots[kFreeTime].integer());
        std::optional<Move> moved;
        if (uint64_t to = static_cast<uint64_t>(slots[kFreeNewAddress].integer()))
          moved = Move{to, static_cast<uint64_t>(slots[kFreeNewSize].integer()),
                       static_cast<float>(slots[kFreeNewWeight].number())};
        profile_.add_free(process, time, static_cast<uint64_t>(slots[kFreeAddress].integer()), moved, later_chunk);
        last_event = std::max(last_event, time);
      } else if (type == java_type) {
        e.read(java_samples, {slots.data(), kJavaSlots});
        // The JDK's weight is the bytes the sample stands for; there is no count estimate.
        Sample a;
        a.time_nanos = header.ticks_to_nanos(slots[kJavaTime].integer());
        a.thread = thread(slots[kJavaThread]);
        a.stack = stacks.stack(slots[kJavaStack]);
        a.size = static_cast<uint64_t>(std::max<int64_t>(slots[kJavaWeight].integer(), 0));
        a.process = process;
        a.source = AllocationSource::JavaHeap;
        profile_.add_allocation(a);
        last_event = std::max(last_event, a.time_nanos);
      }
    });
    profile_.processes[process].end_nanos = last_event;
  }

  Profile& profile_;
  std::vector<int64_t> images_;  // each process entry's image start (see process_index)
  std::vector<uint32_t> file_processes_;  // of the file being read
  int64_t file_start_ = INT64_MAX;
  // By process entry: where the chunks of it in earlier files, and in this one, end.
  std::vector<int64_t> earlier_files_end_, file_end_;
  std::optional<int64_t> overlapping_pid_;
  bool reading_samples_ = false;
  NativeLines lines_;
  SourceLines source_lines_;  // shared by all chunks: each file's line table is read once
};

}  // namespace

struct ProfileReader::Reading {
  Reading(SampleSelector* selector, NativeLines lines) : builder(profile, lines) { profile.set_selector(selector); }
  Profile profile;
  ProfileBuilder builder;
  std::vector<std::pair<std::string, std::string>> warnings;  // file, warning
  size_t files = 0;  // read so far
};

ProfileReader::ProfileReader(SampleSelector* selector, NativeLines lines)
    : reading_(std::make_unique<Reading>(selector, lines)) {}

ProfileReader::~ProfileReader() = default;

void ProfileReader::read(std::span<const uint8_t> recording_bytes, const MappedFile* file, const std::string& name,
                         const ReadProgress& progress) {
  ProfileBuilder& builder = reading_->builder;
  auto observer = [&](size_t offset) {
    if (file) file->release_before(offset);
    if (progress && builder.reading_samples())
      progress(static_cast<double>(offset) / static_cast<double>(recording_bytes.size()));
  };
  jfr::Recording recording(recording_bytes, observer);
  reading_->files++;
  builder.begin_file();
  recording.for_each_chunk([&](const Chunk& chunk) { builder.add(chunk); });
  builder.end_file(recording.warnings().empty());
  for (const std::string& w : recording.warnings()) reading_->warnings.emplace_back(name, w);
  if (auto pid = builder.overlapping_pid())
    reading_->warnings.emplace_back(name, "it covers a time that an earlier file covers too, for process " +
                                              std::to_string(*pid) + ": what both hold is counted twice");
}

void ProfileReader::read(const std::string& path, const ReadProgress& progress) {
  MappedFile file = jfr::map_recording(path);
  read(file.bytes(), &file, path, progress);
}

void ProfileReader::read(std::span<const uint8_t> recording) { read(recording, nullptr, "", {}); }

Profile ProfileReader::finish() {
  Profile& profile = reading_->profile;
  reading_->builder.finish();
  for (const auto& [name, w] : reading_->warnings)
    profile.warnings.push_back(reading_->files > 1 && !name.empty() ? name + ": " + w : w);
  for (const std::string& w : reading_->builder.warnings()) profile.warnings.push_back(w);
  profile.set_selector(nullptr);
  return std::move(profile);
}

Profile build_profile(std::span<const uint8_t> recording_bytes) {
  ProfileReader reader;
  reader.read(recording_bytes);
  return reader.finish();
}

Profile read_profile(const std::string& path, const ReadProgress& progress, SampleSelector* selector,
                     NativeLines lines) {
  ProfileReader reader(selector, lines);
  reader.read(path, progress);
  return reader.finish();
}

}  // namespace nmprof::profile
