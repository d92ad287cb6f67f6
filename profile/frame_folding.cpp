#include "profile/frame_folding.h"

namespace nmprof::profile {

const std::vector<FoldRule>& default_fold_rules() {
  static const std::vector<FoldRule> rules = {
      {"^(\\S*::)?operator (new|delete)\\b", "C++ operator new and delete, global or of a class"},
      {"^(std|__gnu_cxx|__cxxabiv1)::", "C++ standard library internals (containers, strings, allocators)"},
      {"^(os::(malloc|realloc|calloc|strdup)|AllocateHeap|ReallocateHeap|"
       "MallocTracker::|Arena::|ChunkPool::)",
       "HotSpot's allocation wrappers"},
      {"^Java_(java|jdk|sun|com_sun)_", "JNI glue: native halves of the JDK's own Java methods"},
      {"^(JNI_|jni_|JVM_|Unsafe_)", "JVM entry points (in libjvm.so only)", "libjvm.so"},
      {"^(deflateInit2?_|inflateInit2?_|zcalloc)$", "zlib's allocation entry points (used by java.util.zip)"},
      {"^(_?Py(Object|Mem)_(Raw)?(Malloc|Calloc|Realloc)|_PyObject_|_PyMem_|pymalloc_)", "CPython's allocators"},
      {"^(__zend_(malloc|calloc|realloc)|_?e(m|c|re)alloc|_safe_f?e?(m|re)alloc|_estrn?dup|zend_mm_)",
       "PHP's Zend allocator"},
      {"^(__rust_(alloc|realloc|alloc_zeroed)|__rdl_|<?(alloc|core)::)",
       "Rust's global allocator, and the standard library's alloc:: and core:: internals (its Vec, Box, String and "
       "allocator code inlined into a caller)"},
  };
  return rules;
}

std::string fold_name(const Frame& frame) {
  if (is_java(frame.kind)) return frame.container.empty() ? frame.function : frame.container + "." + frame.function;
  const std::string& name = frame.function;
  // A space outside template arguments and before the parameters ends a return type.
  int depth = 0;
  for (size_t i = 0; i < name.size(); i++) {
    char c = name[i];
    if (c == '<') depth++;
    if (c == '>' && depth > 0) depth--;
    if (c == '(' && depth == 0) break;
    if (c == ' ' && depth == 0 && !std::string_view(name).substr(0, i).ends_with("operator"))
      return name.substr(i + 1);
  }
  return name;
}

FrameFolder::FrameFolder(bool defaults, const std::vector<std::string>& extra_patterns) {
  if (defaults) {
    for (const auto& rule : default_fold_rules()) {
      rules_.emplace_back(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
      user_rule_.push_back(false);
      library_.push_back(rule.library);
    }
  }
  for (const auto& pattern : extra_patterns) {
    rules_.emplace_back(pattern, std::regex::ECMAScript | std::regex::optimize);
    user_rule_.push_back(true);
    library_.push_back(nullptr);
  }
}

bool FrameFolder::folds(const Frame& frame) const {
  bool runtime = is_runtime_frame(frame.kind);
  std::string name = fold_name(frame);
  for (size_t i = 0; i < rules_.size(); i++)
    if ((user_rule_[i] || !runtime) && (!library_[i] || frame.container == library_[i]) &&
        std::regex_search(name, rules_[i]))
      return true;
  return false;
}

}  // namespace nmprof::profile
