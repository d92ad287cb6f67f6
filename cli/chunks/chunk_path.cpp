#include "cli/chunks/chunk_path.h"

#include "protocol/agent_options.h"

namespace nmprof::cli {

bool names_each_chunk(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); i++) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == 'n' || pattern[i + 1] == 't') return true;
    i++;  // the character after a '%' is never the start of another
  }
  return false;
}

std::string chunk_path(std::string_view pattern, unsigned number, long pid, std::string_view time_text) {
  // %n first; %% stays for expand_path_template, which takes the rest.
  std::string with_number;
  for (size_t i = 0; i < pattern.size(); i++) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'n') {
        with_number += std::to_string(number);
      } else {
        with_number += pattern.substr(i, 2);
      }
      i++;
      continue;
    }
    with_number += pattern[i];
  }
  return expand_path_template(with_number, pid, time_text);
}

}  // namespace nmprof::cli
