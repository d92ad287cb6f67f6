#include "formats/jfr/nmprof_schema.h"

#include <string>
#include <utility>

namespace nmprof::jfr::schema {
namespace {

AnnotationDecl label(std::string text) { return {kLabel, {{"value", std::move(text)}}}; }
AnnotationDecl description(std::string text) { return {kDescription, {{"value", std::move(text)}}}; }
AnnotationDecl marker(uint64_t type) { return {type, {}}; }
AnnotationDecl with_value(uint64_t type, std::string value) { return {type, {{"value", std::move(value)}}}; }

FieldDecl field(std::string name, uint64_t type, std::string text) {
  return FieldDecl{std::move(name), type, false, false, {label(std::move(text))}};
}
FieldDecl pooled(std::string name, uint64_t type, std::string text) {
  FieldDecl f = field(std::move(name), type, std::move(text));
  f.constant_pool = true;
  return f;
}
FieldDecl annotated(FieldDecl f, std::vector<AnnotationDecl> more) {
  for (auto& a : more) f.annotations.push_back(std::move(a));
  return f;
}
FieldDecl start_time() {
  return annotated(field("startTime", kLong, "Start Time"), {with_value(kTimestamp, "TICKS")});
}
FieldDecl bytes(std::string name, std::string text) {
  return annotated(field(std::move(name), kLong, std::move(text)),
                   {marker(kUnsigned), with_value(kDataAmount, "BYTES")});
}
FieldDecl address() {
  return annotated(field("address", kLong, "Address"), {marker(kUnsigned), marker(kMemoryAddress)});
}

TypeDecl primitive(const char* name, uint64_t id) { return TypeDecl{name, id, "", false, {}, {}}; }

TypeDecl annotation_type(const char* name, uint64_t id, bool has_value, bool array_value = false,
                         bool content_type = false) {
  TypeDecl t{name, id, "java.lang.annotation.Annotation", false, {}, {}};
  if (has_value) t.fields.push_back(FieldDecl{"value", kString, false, array_value, {}});
  if (content_type) t.annotations.push_back(marker(kContentType));
  return t;
}

TypeDecl event_type(const char* name, uint64_t id, std::string text, std::vector<FieldDecl> fields,
                    std::string about) {
  TypeDecl t{name, id, "jdk.jfr.Event", false, {}, std::move(fields)};
  t.annotations = {label(std::move(text)), {kCategory, {{"value-0", "Native Memory"}}},
                   description(std::move(about))};
  return t;
}

std::vector<FieldDecl> malloc_fields(std::span<const std::string> context_attributes) {
  std::vector<FieldDecl> fields = {
      start_time(), pooled("eventThread", kThread, "Event Thread"), pooled("stackTrace", kStackTrace, "Stack Trace"),
      address(), bytes("size", "Size"),
      annotated(field("weight", kFloat, "Weight"),
                {description("Allocations this sample stands for (1/probability of sampling it)")}),
      pooled("allocator", kAllocator, "Allocator"),
      annotated(bytes(kPreviousSizeField, "Previous Size"),
                {description("realloc: the block's size before the call; the sample stands for the bytes the call "
                             "added (none when it shrank the block). 0 for new blocks")}),
      annotated(field(kLiveWeightField, kFloat, "Live Weight"),
                {description("Blocks of this size the sample stands for in the live view (1/probability that a "
                             "block of its size is tracked)")}),
      annotated(field(kSpanIdField, kLong, "Span Id"), {description("The thread's span when sampled; 0 for none")}),
      annotated(field(kLocalRootSpanIdField, kLong, "Local Root Span Id"),
                {description("The root span of the thread's request in this process; 0 for none")})};
  // Their values refer to the java.lang.String pool (string encoding 2), empty for none.
  for (const std::string& name : context_attributes)
    fields.push_back(annotated(field(name, kString, name), {description("Context attribute")}));
  return fields;
}

Metadata build(std::span<const std::string> context_attributes) {
  Metadata m;
  m.add(primitive("boolean", kBoolean));
  m.add(primitive("float", kFloat));
  m.add(primitive("int", kInt));
  m.add(primitive("long", kLong));
  m.add(primitive("java.lang.String", kString));

  m.add({"java.lang.Thread", kThread, "", false, {label("Thread")},
         {field("osName", kString, "OS Thread Name"), field("osThreadId", kLong, "OS Thread Id"),
          field("javaName", kString, "Java Thread Name"), field("javaThreadId", kLong, "Java Thread Id")}});
  m.add({"java.lang.Class", kClass, "", false, {label("Java Class")},
         {pooled("classLoader", kClassLoader, "Class Loader"), pooled("name", kSymbol, "Name"),
          pooled("package", kPackage, "Package"), field("modifiers", kInt, "Access Modifiers"),
          field("hidden", kBoolean, "Hidden")}});
  m.add({"jdk.types.ClassLoader", kClassLoader, "", false, {label("Java Class Loader")},
         {pooled("type", kClass, "Type"), pooled("name", kSymbol, "Name")}});
  m.add({"jdk.types.FrameType", kFrameType, "", true, {label("Frame type")},
         {field("description", kString, "Description")}});
  FieldDecl frames = field("frames", kStackFrame, "Stack Frames");
  frames.array = true;
  m.add({"jdk.types.StackTrace", kStackTrace, "", false, {label("Stacktrace")},
         {field("truncated", kBoolean, "Truncated"), frames}});
  m.add({"jdk.types.StackFrame", kStackFrame, "", false, {},
         {pooled("method", kMethod, "Java Method"), field("lineNumber", kInt, "Line Number"),
          field("bytecodeIndex", kInt, "Bytecode Index"), pooled("type", kFrameType, "Frame Type")}});
  m.add({"jdk.types.Method", kMethod, "", false, {label("Java Method")},
         {pooled("type", kClass, "Type"), pooled("name", kSymbol, "Name"),
          pooled("descriptor", kSymbol, "Descriptor"), field("modifiers", kInt, "Access Modifiers"),
          field("hidden", kBoolean, "Hidden")}});
  m.add({"jdk.types.Package", kPackage, "", false, {label("Package")}, {pooled("name", kSymbol, "Name")}});
  m.add({"nmprof.types.Allocator", kAllocator, "", true, {label("Allocator")},
         {field("name", kString, "Name")}});
  m.add({"jdk.types.Symbol", kSymbol, "", true, {label("Symbol")}, {field("string", kString, "String")}});

  m.add(event_type(kMallocName, kMallocEvent, "Malloc", malloc_fields(context_attributes),
                   "A sampled native memory allocation"));
  m.add(event_type(kLiveMallocName, kLiveMallocEvent, "Live Malloc", malloc_fields(context_attributes),
                   "A sampled allocation of an earlier chunk whose block is still live: in the live view only"));
  m.add(event_type(kFreeName, kFreeEvent, "Free",
                   {start_time(), pooled("eventThread", kThread, "Event Thread"),
                    pooled("stackTrace", kStackTrace, "Stack Trace"), address(),
                    annotated(field(kNewAddressField, kLong, "New Address"),
                              {marker(kUnsigned), marker(kMemoryAddress),
                               description("realloc without a sample of its own: where the block lives on; 0 for "
                                           "a free")}),
                    bytes(kNewSizeField, "New Size"),
                    annotated(field(kNewWeightField, kFloat, "New Weight"),
                              {description("The live weight of the block's new size")})},
                   "Release of a sampled native memory block, or its move by a realloc"));
  m.add(event_type(kProcessName, kProcessEvent, "Profiled Process",
                   {start_time(), field("pid", kLong, "Process Id"), field("parentPid", kLong, "Parent Process Id"),
                    field("commandLine", kString, "Command Line"), field("executable", kString, "Executable"),
                    field("hostName", kString, "Host Name"),
                    annotated(field("processStart", kLong, "Process Start"),
                              {with_value(kTimestamp, "MILLISECONDS_SINCE_EPOCH")}),
                    field("agentVersion", kString, "Agent Version")},
                   "The process this chunk of the recording comes from"));
  m.add(event_type(kSettingName, kSettingEvent, "Recording Setting",
                   {start_time(),
                    annotated(field("duration", kLong, "Duration"), {with_value(kTimespan, "TICKS")}),
                    field("id", kLong, "Event Id"), field("name", kString, "Setting Name"),
                    field("value", kString, "Setting Value")},
                   "An option the agent recorded with"));
  m.add(event_type(kTagName, kTagEvent, "Recording Tag",
                   {start_time(), field("key", kString, "Key"), field("value", kString, "Value")},
                   "A tag the user gave the whole recording (--tag KEY=VALUE)"));
  m.add(event_type(kStatisticsName, kStatisticsEvent, "Profiler Statistics",
                   {start_time(), field("samples", kLong, "Samples"),
                    field("lostSamples", kLong, "Lost Samples"), bytes("agentMemory", "Agent Memory"),
                    field("trackedBlocks", kLong, "Tracked Blocks"),
                    annotated(field("untrackedSamples", kLong, "Untracked Samples"),
                              {description("Samples whose frees were not tracked: the tracking table was full")}),
                    bytes("trackingMemory", "Tracking Memory"),
                    annotated(bytes("liveBytes", "Live Bytes"),
                              {description("Estimated bytes still allocated in sampled stacks")}),
                    annotated(field("undeclaredAttributes", kLong, "Undeclared Attributes"),
                              {description("Context attributes set by name without being declared (ignored)")}),
                    annotated(bytes("minInterval", "Lowest Interval"),
                              {description("The smallest mean sampling interval used (--rate adapts it)")}),
                    annotated(bytes("maxInterval", "Highest Interval"),
                              {description("The largest mean sampling interval used (--rate adapts it)")}),
                    annotated(field("stoppedGrowing", kLong, "Stopped Growing"),
                              {description("Why the file stopped growing, later samples missing: 1 it reached "
                                           "--max-size, 2 the disk was nearly full, 3 it reached the process's "
                                           "file size limit, 4 its process went on (in the last statistics of a "
                                           "file: killed, still running, or the agent lost its file); 0 it did "
                                           "not, and this is the process's last write")})},
                   "Totals of the agent's own work, as of this event"));
  m.add(event_type(kModuleName, kModuleEvent, "Native Module",
                   {start_time(), field("name", kString, "Name"), field("path", kString, "Path"),
                    annotated(field("buildId", kString, "Build Id"),
                              {description("The GNU build id of the image loaded, hex; empty when it has none")}),
                    annotated(bytes("fileSize", "File Size"), {description("Its file's size when first seen")}),
                    annotated(field("fileModified", kLong, "File Modified"),
                              {description("Its file's modification time when first seen, nanoseconds since the "
                                           "Unix epoch")}),
                    field("device", kLong, "Device"), field("inode", kLong, "Inode")},
                   "A library or executable that native frames are in: their class is its name, their bytecode "
                   "index the return address's link-time offset in it. Which build was loaded: its build id, "
                   "and its file when first seen (size 0 when it could not be read)"));

  m.add(annotation_type("jdk.jfr.Label", kLabel, true));
  m.add(annotation_type("jdk.jfr.Category", kCategory, true, true));
  m.add(annotation_type("jdk.jfr.ContentType", kContentType, false));
  m.add(annotation_type("jdk.jfr.Timestamp", kTimestamp, true, false, true));
  m.add(annotation_type("jdk.jfr.Timespan", kTimespan, true, false, true));
  m.add(annotation_type("jdk.jfr.DataAmount", kDataAmount, true, false, true));
  m.add(annotation_type("jdk.jfr.MemoryAddress", kMemoryAddress, false, false, true));
  m.add(annotation_type("jdk.jfr.Unsigned", kUnsigned, false, false, true));
  m.add(annotation_type("jdk.jfr.Description", kDescription, true));
  return m;
}

}  // namespace

namespace {

// The names of the pools' entries, by key: what the writer writes and the reader
// maps back.
constexpr const char* kFrameTypeNames[kFrameTypeCount] = {"Interpreted", "JIT compiled", "Inlined",     "Native",
                                                          "C++",         "Kernel",       "C1 compiled", "PHP"};
constexpr const char* kAllocatorNames[kAllocatorCount] = {"libc", "ZendMM"};

template <typename Key, int count>
std::optional<Key> key_named(const char* const (&names)[count], std::string_view name) {
  for (int i = 0; i < count; i++)
    if (name == names[i]) return static_cast<Key>(i);
  return std::nullopt;
}

}  // namespace

const char* frame_type_name(FrameTypeKey key) { return key < kFrameTypeCount ? kFrameTypeNames[key] : "Native"; }

std::optional<FrameTypeKey> frame_type_key(std::string_view name) {
  return key_named<FrameTypeKey>(kFrameTypeNames, name);
}

const char* allocator_name(AllocatorKey key) { return key < kAllocatorCount ? kAllocatorNames[key] : "libc"; }

std::optional<AllocatorKey> allocator_key(std::string_view name) {
  return key_named<AllocatorKey>(kAllocatorNames, name);
}

const char* stop_reason_text(uint64_t reason) {
  switch (reason) {
    case kMaxSizeReached: return "it reached --max-size";
    case kDiskNearlyFull: return "the disk was nearly full";
    case kProcessFileLimit: return "it reached the process's file size limit (ulimit -f)";
    case kBeforeTheEnd:
      return "it ends before its process did: the process was killed or is still running, or the agent lost its "
             "file";
    case kOutOfMemory: return "the agent ran out of memory: the process's address space was exhausted (ulimit -v)";
    case kExeced:
      return "it exec'd a program that left no recording (statically linked, setuid, started without nmprof's "
             "LD_PRELOAD, or killed before it wrote)";
    case kSeccompFilter:
      return "the program put itself under a seccomp filter, which could have killed it for the agent's system "
             "calls";
    default: return nullptr;
  }
}

const Metadata& nmprof_metadata() {
  static const Metadata metadata = build({});
  return metadata;
}

Metadata nmprof_metadata(std::span<const std::string> context_attributes) { return build(context_attributes); }

bool is_malloc_field(std::string_view name) {
  for (const FieldDecl& field : malloc_fields({}))
    if (field.name == name) return true;
  return false;
}

}  // namespace nmprof::jfr::schema
