// Which frames on top of an allocation stack are folded away: allocator wrappers and
// runtime plumbing (os::malloc, operator new, std:: internals, JNI glue, ZendMM,
// pymalloc) that stand between the allocator and the code that asked for memory.
// The rules are a table of patterns, listed in `nmprof report --help` and the man page.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nmprof::profile {

struct FoldRule {
  const char* pattern;  // ECMAScript regex, searched in the frame's name
  const char* what;     // what it folds, for the documentation
  // When set, only native frames of this library (its basename) are folded: a
  // user's own function may share a runtime's prefix (jni_site, JVM_helper).
  const char* library = nullptr;
};

// nmprof's default rules, in the order they are documented.
const std::vector<FoldRule>& default_fold_rules();

// The name rules are matched against: a Java frame's "package.Class.method", a native
// frame's symbol without a leading return type ("void std::vector<...>::_M_insert(...)"
// is matched as "std::vector<...>::_M_insert(...)").
std::string fold_name(const Frame& frame);

class FrameFolder {
 public:
  // The default rules (unless `defaults` is false) and the user's extra patterns.
  // Throws std::regex_error for a pattern that is not a valid regex.
  FrameFolder(bool defaults, const std::vector<std::string>& extra_patterns);

  bool folds(const Frame& frame) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<std::regex> rules_;
  std::vector<bool> user_rule_;  // the user's rules also apply to Java and PHP frames
  std::vector<const char*> library_;
};

}  // namespace nmprof::profile
