// The file names of a looping recording's chunks (--loop): -o with %n (the chunk's
// number, from 0) and %t (its start time), besides %p (the command's pid) and %%.
#pragma once

#include <string>
#include <string_view>

namespace nmprof::cli {

// Whether `pattern` names each chunk apart: it holds %n or %t (not %%n, a '%' then 'n').
bool names_each_chunk(std::string_view pattern);
// `pattern` with %n, %p, %t and %% expanded.
std::string chunk_path(std::string_view pattern, unsigned number, long pid, std::string_view time_text);

}  // namespace nmprof::cli
