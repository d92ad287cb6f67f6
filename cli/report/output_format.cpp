#include "cli/report/output_format.h"

#include <strings.h>

#include <cstring>

namespace nmprof::report {
namespace {

constexpr std::pair<const char*, Format> kNames[] = {
    {"text", Format::Text},
    {"json", Format::Json},
    {"pprof", Format::Pprof},
    {"collapsed", Format::Collapsed},
    {"html", Format::Html},
};

constexpr std::pair<const char*, Format> kExtensions[] = {
    {".pb.gz", Format::Pprof}, {".pprof", Format::Pprof},   {".json", Format::Json}, {".collapsed", Format::Collapsed},
    {".folded", Format::Collapsed}, {".html", Format::Html}, {".txt", Format::Text}, {".jfr", Format::Jfr},
};

}  // namespace

std::string report_format_choices() {
  std::string choices;
  for (const auto& [name, format] : kNames) choices += (choices.empty() ? "" : "|") + std::string(name);
  return choices;
}

std::span<const std::pair<const char*, Format>> report_formats() { return kNames; }

// Whatever the case: report.HTML is a page, not a JFR file under that name.
std::optional<Format> format_of_path(const std::string& path) {
  for (const auto& [extension, format] : kExtensions) {
    size_t length = strlen(extension);
    if (path.size() >= length && strcasecmp(path.c_str() + path.size() - length, extension) == 0) return format;
  }
  return std::nullopt;
}

}  // namespace nmprof::report
