#include "agent/hooks/exec_environment.h"

#include <limits.h>

#include <cstring>

#include "protocol/agent_options.h"

namespace nmprof::exec_environment {
namespace {

constexpr char kPreload[] = "LD_PRELOAD=";
constexpr size_t kPreloadLength = sizeof kPreload - 1;
constexpr size_t kOptionsLength = sizeof kOptionsVariable - 1;  // then '='

char g_library[PATH_MAX];  // empty: nothing remembered, execs go as they are
char g_options[4096];
// The most the new environment takes of the execing thread's stack (its pointers and
// the two variables): a thread may have as little as 16 KiB. An environment of more
// than about 1,000 entries goes as it is.
constexpr size_t kMaxRoom = 8 * 1024;

bool is_options_entry(const char* entry) {
  return strncmp(entry, kOptionsVariable, kOptionsLength) == 0 && entry[kOptionsLength] == '=';
}

bool is_preload_entry(const char* entry) { return strncmp(entry, kPreload, kPreloadLength) == 0; }

const char* library_file_name() {
  const char* slash = strrchr(g_library, '/');
  return slash ? slash + 1 : g_library;
}

// What an environment holds of the agent's variables.
struct Found {
  size_t entries = 0;
  const char* preload = nullptr;  // the first LD_PRELOAD's value
  bool preloads_agent = false;
  bool has_options = false;
};

Found find_in(char* const* envp) {
  Found f;
  for (; envp && envp[f.entries]; f.entries++) {
    const char* entry = envp[f.entries];
    if (is_options_entry(entry)) f.has_options = true;
    if (is_preload_entry(entry) && !f.preload) f.preload = entry + kPreloadLength;
  }
  f.preloads_agent = f.preload && preload_names(f.preload, library_file_name());
  return f;
}

}  // namespace

bool preload_names(const char* preload, const char* file_name) {
  size_t length = strlen(file_name);
  if (length == 0) return false;
  for (const char* entry = preload; *entry;) {
    size_t entry_length = strcspn(entry, ": ");
    const char* end = entry + entry_length;
    if (entry_length >= length && strncmp(end - length, file_name, length) == 0 &&
        (entry_length == length || end[-static_cast<long>(length) - 1] == '/'))
      return true;
    entry = *end ? end + 1 : end;
  }
  return false;
}

void remember(const char* library_path, const char* options) {
  g_library[0] = '\0';
  if (strlen(library_path) >= sizeof g_library || strlen(options) >= sizeof g_options) return;
  strcpy(g_options, options);
  strcpy(g_library, library_path);
}

size_t room_needed(char* const* envp) {
  if (!g_library[0]) return 0;
  Found f = find_in(envp);
  if (f.preloads_agent && f.has_options) return 0;
  size_t bytes = (f.entries + 3) * sizeof(char*);
  if (!f.preloads_agent) bytes += kPreloadLength + (f.preload ? strlen(f.preload) + 1 : 0) + strlen(g_library) + 1;
  if (!f.has_options) bytes += kOptionsLength + 1 + strlen(g_options) + 1;
  return bytes <= kMaxRoom ? bytes : 0;
}

char* const* with_agent(char* const* envp, void* room) {
  Found f = find_in(envp);
  auto** out = static_cast<char**>(room);
  size_t n = 0;
  for (size_t i = 0; i < f.entries; i++)
    if (f.preloads_agent || !is_preload_entry(envp[i])) out[n++] = envp[i];
  char* text = reinterpret_cast<char*>(out + f.entries + 3);
  if (!f.preloads_agent) {  // the launcher's preloads first: they are what it meant
    out[n++] = text;
    text = stpcpy(text, kPreload);
    if (f.preload) text = stpcpy(stpcpy(text, f.preload), ":");
    text = stpcpy(text, g_library) + 1;
  }
  if (!f.has_options) {
    out[n++] = text;
    stpcpy(stpcpy(stpcpy(text, kOptionsVariable), "="), g_options);
  }
  out[n] = nullptr;
  return out;
}

}  // namespace nmprof::exec_environment
