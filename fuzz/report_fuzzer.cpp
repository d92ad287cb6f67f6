// Fuzzes `nmprof report` past the reader: the profile built from a recording, and
// every view of it (by stack and by function, allocated and live, text and JSON)
// plus the summary `nmprof run` prints.
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>

#include "cli/report/json_report.h"
#include "cli/report/report.h"
#include "cli/report/report_command.h"
#include "cli/report/text_report.h"
#include "formats/jfr/reading/byte_reader.h"
#include "formats/profile/jfr_profile.h"

namespace {

using namespace nmprof::report;

void render_every_view(const nmprof::profile::Profile& profile) {
  for (auto by : {ReportOptions::By::Stack, ReportOptions::By::Function}) {
    for (bool live : {false, true}) {
      ReportOptions options;
      options.file = "fuzz.jfr";
      options.top = 5;
      options.by = by;
      options.live = live;
      try {
        Report report = build_report(profile, options);
        std::ostringstream out;
        write_text_report(report, out);
        write_json_report(report, out);
      } catch (const ReportError&) {
        // Nothing to report in this view: the documented refusal.
      }
    }
  }
  std::ostringstream summary;
  print_run_summary(profile, "fuzz.jfr", "fuzz.jfr", 5, summary);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    render_every_view(nmprof::profile::build_profile(std::span<const uint8_t>(data, size)));
  } catch (const nmprof::jfr::FormatError&) {
  }
  return 0;
}
