#include "agent/php/php_frames.h"

#include <string>
#include <string_view>

#include "agent/stacks/native_frames.h"
#include "agent/php/engine_memory.h"
#include "agent/php/php_stacks.h"
#include "agent/php/zend_layout.h"

namespace nmprof::php {
namespace {

namespace L = layout82;

// Longer names are cut: a corrupt length must not send the copy through memory.
constexpr size_t kMaxName = 4096;

std::string_view text_of(uintptr_t zend_string) {
  if (!zend_string) return {};
  size_t length = load<size_t>(zend_string, L::kStringLength);
  return {reinterpret_cast<const char*>(zend_string + L::kStringValue), length < kMaxName ? length : kMaxName};
}

const char* entry_name(FileEntry entry) {
  switch (entry) {
    case FileEntry::Include: return "include";
    case FileEntry::IncludeOnce: return "include_once";
    case FileEntry::Require: return "require";
    case FileEntry::RequireOnce: return "require_once";
    case FileEntry::Eval: return "eval";
    case FileEntry::None: break;
  }
  return "{main}";
}

}  // namespace

void PhpFrameResolver::resolve(const CallFrame& frame, JfrPools& pools, uint32_t& method, int32_t& line) {
  if (frame.type != jfr::schema::kPhp) return native_.resolve(frame, pools, method, line);
  uintptr_t func = frame.id & ~kFileEntryMask;
  auto entry = static_cast<FileEntry>(frame.id & kFileEntryMask);
  uint8_t type = load<uint8_t>(func, L::kFunctionType);
  std::string name;
  if (uintptr_t scope = load_pointer(func, L::kFunctionScope)) {
    name = text_of(load_pointer(scope, L::kClassName));
    name += "::";
  }
  std::string_view function = text_of(load_pointer(func, L::kFunctionName));
  name += function.empty() ? (type == L::kEvalCode ? "{eval}" : entry_name(entry)) : function;
  bool user = type == L::kUserFunction || type == L::kEvalCode;
  std::string_view file = user ? text_of(load_pointer(func, L::kOpArrayFilename)) : "[internal function]";
  method = pools.method(pools.klass(file.empty() ? "[unknown file]" : file), name,
                        NativeFrameResolver::kNativeDescriptor, 0);
  line = user && frame.bci > 0 ? frame.bci : -1;
}

uint32_t PhpFrameResolver::link_offset(const CallFrame& frame) {
  return frame.type == jfr::schema::kPhp ? 0 : native_.link_offset(frame);
}

}  // namespace nmprof::php
