// The formats `nmprof report` writes, by name and by the output file's extension
// (which is also how `run` and `attach -o FILE` choose what to write).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>

namespace nmprof::report {

enum class Format { Text, Json, Pprof, Collapsed, Jfr };

// The formats `report --format` takes, by name, in the order --help lists them.
std::span<const std::pair<const char*, Format>> report_formats();
// "text|json|pprof|collapsed".
std::string report_format_choices();
// By extension: .pb.gz/.pprof -> pprof, .json, .collapsed/.folded, .txt, .jfr.
std::optional<Format> format_of_path(const std::string& path);

}  // namespace nmprof::report
