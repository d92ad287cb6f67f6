#include "profile/debug_file_search.h"

#include <sys/stat.h>

#include <cstdlib>
#include <vector>

namespace nmprof::profile {
namespace {

constexpr const char* kDebugRoot = "/usr/lib/debug";  // libdw's default debuginfo_path, after "" and ".debug"

// libdw's paths for each name, in its order. Without a debuglink it looks for the
// file's name + ".debug", then for the file's own name (but not the file itself).
std::vector<std::string> candidates(const std::string& file, const std::string& debuglink,
                                    const std::string& build_id) {
  std::vector<std::string> paths;
  if (build_id.size() > 2)
    paths.push_back(std::string(kDebugRoot) + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) +
                    ".debug");
  size_t slash = file.rfind('/');
  std::string directory = slash == std::string::npos ? "." : file.substr(0, slash);
  std::string base = file.substr(slash + 1);
  std::vector<std::string> names = {!debuglink.empty() ? debuglink : base + ".debug"};
  if (debuglink.empty()) names.push_back(base);
  if (names[0].starts_with('/')) {
    paths.push_back(names[0]);
    return paths;
  }
  for (const std::string& name : names) {
    if (name != base) paths.push_back(directory + "/" + name);
    paths.push_back(directory + "/.debug/" + name);
    // /usr/lib/debug/usr/bin/NAME, /usr/lib/debug/bin/NAME, /usr/lib/debug/NAME
    for (std::string tail = directory;; tail = tail.substr(tail.find('/', 1))) {
      paths.push_back(kDebugRoot + tail + "/" + name);
      if (tail.find('/', 1) == std::string::npos) break;
    }
    paths.push_back(std::string(kDebugRoot) + "/" + name);
  }
  return paths;
}

}  // namespace

DebugFiles debug_files_at(const std::string& file, const std::string& debuglink, const std::string& build_id) {
  DebugFiles found = DebugFiles::None;
  for (const std::string& path : candidates(file, debuglink, build_id)) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) return DebugFiles::NotRegular;
    found = DebugFiles::Present;
  }
  return found;
}

bool debuginfod_configured() {
  const char* urls = getenv("DEBUGINFOD_URLS");
  return urls && *urls;
}

}  // namespace nmprof::profile
