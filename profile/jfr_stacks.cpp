#include "profile/jfr_stacks.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "formats/jfr/nmprof_schema.h"
#include "formats/text/utf8.h"
#include "profile/allocator_frames.h"

namespace nmprof::profile {
namespace {

constexpr int kMaxIndirections = 8;  // Symbol -> String pool is the deepest chain in practice

}  // namespace

std::string text_of(const jfr::Chunk& chunk, const jfr::Value& value) {
  jfr::Value v = value;
  for (int i = 0; i < kMaxIndirections; i++) {
    switch (v.kind()) {
      case jfr::Value::Kind::String: return v.string();
      case jfr::Value::Kind::Reference: v = chunk.resolve(v); break;
      case jfr::Value::Kind::Struct:
        if (v.elements().size() != 1) return {};
        v = jfr::Value(v.elements()[0]);
        break;
      default: return {};
    }
  }
  return {};
}

uint32_t StackResolver::stack(const jfr::Value& reference) {
  bool pooled = reference.kind() == jfr::Value::Kind::Reference;
  if (pooled) {
    auto memo = stacks_.find(reference.key());
    if (memo != stacks_.end()) return memo->second;
  }

  jfr::Value trace = chunk_.resolve(reference);
  Stack stack;
  stack.truncated = trace.field("truncated").integer() != 0;
  for (const auto& f : trace.field("frames").elements()) add_frames(f, stack.frames);
  auto first_kept = std::find_if(stack.frames.begin(), stack.frames.end(),
                                 [this](uint32_t id) { return !is_allocator_frame(profile_.frames()[id]); });
  if (first_kept == stack.frames.end() && !stack.frames.empty()) --first_kept;  // keep something to show
  stack.frames.erase(stack.frames.begin(), first_kept);

  uint32_t id = profile_.add_stack(stack);
  if (pooled) stacks_.emplace(reference.key(), id);
  return id;
}

const StackResolver::Method& StackResolver::method(const jfr::Value& reference) {
  auto memo = methods_.find(reference.key());
  if (memo != methods_.end()) return memo->second;
  jfr::Value m = chunk_.resolve(reference);
  std::string descriptor = text_of(chunk_, m.field("descriptor"));
  bool placeholder = descriptor.ends_with(")L;");
  Method method{text_of(chunk_, m.field("name")), text_of(chunk_, chunk_.resolve(m.field("type")).field("name")),
                std::move(descriptor), placeholder};
  return methods_.emplace(reference.key(), std::move(method)).first->second;
}

FrameKind StackResolver::kind(const jfr::Value& reference, const Method& method) {
  auto memo = frame_types_.find(reference.key());
  if (memo == frame_types_.end()) memo = frame_types_.emplace(reference.key(), text_of(chunk_, reference)).first;
  namespace schema = jfr::schema;
  // No default: a frame type added to the schema is a warning here until mapped.
  switch (schema::frame_type_key(memo->second).value_or(schema::kNative)) {
    case schema::kInterpreted: return FrameKind::Interpreted;
    case schema::kJitCompiled:
    case schema::kC1Compiled: return FrameKind::JitCompiled;
    case schema::kInlined: return FrameKind::Inlined;
    case schema::kCpp: return FrameKind::Cpp;
    case schema::kKernel: return FrameKind::Kernel;
    case schema::kPhp: return FrameKind::Php;
    case schema::kNative: break;
  }
  // "Native" covers both machine code and Java methods declared native; only the
  // latter have a real JVM descriptor.
  return method.native_placeholder || method.class_name.find('/') == std::string::npos ? FrameKind::Native
                                                                                       : FrameKind::JavaNative;
}

// nmprof writes a native frame's return address, as a link-time address in its
// module, where Java frames have their bytecode index. The functions inlined at that
// address come before the frame, each a frame of its own.
void StackResolver::add_source_lines(const jfr::Value& value, Frame& frame, std::vector<uint32_t>& frames) {
  auto module = process_.modules.find(frame.container);
  if (module == process_.modules.end()) return;
  int64_t address = value.field("bytecodeIndex").integer();
  if (address <= 0) return;
  // A frame the agent could only call "module+0x1a2b" (a file out of its reach) is
  // named from the module's file, when it is the build recorded.
  char unnamed[32];
  snprintf(unnamed, sizeof unnamed, "+0x%" PRIx64, static_cast<uint64_t>(address));
  if (frame.function == frame.container + unnamed)
    if (auto function = lines_->function_at(module->first, module->second, static_cast<uint64_t>(address)))
      frame.function = text::escape_controls(*function);
  auto site = lines_->call_site(module->first, module->second, static_cast<uint64_t>(address));
  if (!site) return;
  // Names and files come from the module's debug information: untrusted too.
  for (const InlinedCall& call : site->inlined)
    frames.push_back(profile_.add_frame({text::escape_controls(call.function), frame.container, frame.kind,
                                         call.line.line > 0 ? call.line.line : -1,
                                         text::escape_controls(call.line.file), {}, true}));
  if (site->line.line > 0) {
    frame.file = text::escape_controls(site->line.file);
    frame.line = site->line.line;
  }
}

void StackResolver::add_frames(const jfr::Value& value, std::vector<uint32_t>& frames) {
  const Method& m = method(value.field("method"));
  Frame frame{m.name, m.class_name, kind(value.field("type"), m), -1, {}};
  if (is_runtime_frame(frame.kind)) {
    if (is_java(frame.kind)) {
      std::replace(frame.container.begin(), frame.container.end(), '/', '.');
      frame.signature = m.descriptor;
    }
    int64_t line = value.field("lineNumber").integer();
    if (line > 0) frame.line = static_cast<int32_t>(line);
  } else if (lines_) {
    add_source_lines(value, frame, frames);
  }
  frames.push_back(profile_.add_frame(frame));
}

}  // namespace nmprof::profile
