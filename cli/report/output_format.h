// The formats `nmprof report` writes, by name and by the output file's extension
// (which is also how `run` and `attach -o FILE` choose what to write).
#pragma once

#include <optional>
#include <string>

namespace nmprof::report {

enum class Format { Text, Json, Pprof, Collapsed, Jfr };

// "text|json|pprof|collapsed", as shown by --help.
std::string report_format_choices();
std::optional<Format> format_named(const std::string& name);
// By extension: .pb.gz/.pprof -> pprof, .json, .collapsed/.folded, .txt, .jfr.
std::optional<Format> format_of_path(const std::string& path);

}  // namespace nmprof::report
