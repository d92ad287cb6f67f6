// Fuzzes `nmprof report` past the reader: the profile built from a recording, and
// every view of it (by stack and by function, allocated, live and at the peak, text
// and JSON), the summary `nmprof run` prints and the flame graph page.
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>

#include "cli/report/model/report.h"
#include "cli/report/render/flame_graph.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/text_report.h"
#include "cli/report/report_command.h"
#include "formats/jfr/reading/byte_reader.h"
#include "profile/jfr_profile.h"

namespace {

using namespace nmprof::report;

void render_every_view(const nmprof::profile::Profile& profile) {
  for (auto by : {ReportOptions::By::Stack, ReportOptions::By::Function}) {
    for (bool live : {false, true}) {
      ReportOptions options;
      options.files = {"fuzz.jfr"};
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
  // The flame graph page, with the profile standing in for itself at its peak when it
  // has one (the command reads the file again up to the peak).
  ReportOptions options;
  options.files = {"fuzz.jfr"};
  const nmprof::profile::Profile* at_peak = &profile;
  try {
    Report peak = build_peak_report(profile, profile, options);
    write_text_report(peak, summary);
  } catch (const ReportError&) {
    at_peak = nullptr;  // no live view, or nothing was ever live
  }
  try {
    write_flame_graph(profile, at_peak, options, summary);
  } catch (const ReportError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    render_every_view(nmprof::profile::build_profile(std::span<const uint8_t>(data, size)));
  } catch (const nmprof::jfr::FormatError&) {
  }
  return 0;
}
