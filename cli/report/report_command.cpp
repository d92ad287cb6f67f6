#include "cli/report/report_command.h"

#include <system_error>

#include "cli/report/json_report.h"
#include "cli/report/text_layout.h"
#include "cli/report/text_report.h"
#include "cli/report/units.h"
#include "formats/jfr/byte_reader.h"
#include "formats/profile/jfr_profile.h"

namespace nmprof::report {

int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  const std::string prefix = "nmprof report: ";
  try {
    profile::Profile profile = profile::read_profile(options.file);
    for (const auto& w : profile.warnings) err << prefix << "warning: " << options.file << ": " << w << "\n";
    Report report = build_report(profile, options);
    if (options.format == ReportOptions::Format::Json)
      write_json_report(report, out);
    else
      write_text_report(report, out);
    return 0;
  } catch (const std::system_error& e) {
    err << prefix << e.what() << "\n";
  } catch (const jfr::FormatError& e) {
    err << prefix << options.file << ": " << e.what() << "\n";
  } catch (const ReportError& e) {
    err << prefix << options.file << ": " << e.what() << "\n";
  }
  return 1;
}

void print_run_summary(const profile::Profile& profile, const std::string& file, size_t top, std::ostream& out) {
  const std::string indent = "  ";
  out << "nmprof: profile written to " << file;
  if (profile.processes.size() > 1) out << " (" << profile.processes.size() << " processes)";
  out << "\n";
  for (const auto& w : profile.warnings) write_wrapped(out, indent + "warning: ", w, kTextWidth);
  Report r;
  try {
    ReportOptions options;
    options.file = file;
    options.top = top;
    options.live = has_live_data(profile);
    r = build_report(profile, options);
    if (options.live && r.view_totals.samples == 0) {  // everything was freed
      options.live = false;
      r = build_report(profile, options);
    }
  } catch (const ReportError& e) {
    out << indent << e.what() << "\n";
    return;
  }
  bool live = r.options.live;
  if (live) out << indent << "live at exit: " << totals_text(r, r.live->totals, true) << "\n";
  out << indent << "allocated:    " << totals_text(r, r.allocated, false) << "\n";
  for (const auto& note : r.notes) write_wrapped(out, indent + "warning: ", note, kTextWidth);
  out << indent << "top stacks by " << (live ? "live" : "allocated") << " bytes:\n";
  write_compact_stacks(profile, r.stacks, r.view_totals.bytes, out);
  out << indent << "more: nmprof report " << shell_quote(file) << (live ? " --live" : "") << "\n";
}

}  // namespace nmprof::report
