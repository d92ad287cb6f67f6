#include "cli/report/report_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "cli/exit_codes.h"
#include "cli/output/output_writer.h"
#include "cli/report/model/diff_report.h"
#include "cli/report/model/heap_view.h"
#include "cli/report/progress_line.h"
#include "cli/report/render/collapsed_stacks.h"
#include "cli/report/render/flame_graph.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/pprof_export.h"
#include "cli/report/render/text_layout.h"
#include "cli/report/render/text_report.h"
#include "cli/report/terminal.h"
#include "cli/report/units.h"
#include "formats/jfr/reading/byte_reader.h"
#include "formats/jfr/reading/chunk_header.h"
#include "formats/jfr/reading/recording_file.h"
#include "formats/pprof/gzip.h"
#include "formats/text/utf8.h"
#include "profile/jfr_profile.h"

namespace nmprof::report {
namespace {

namespace fs = std::filesystem;

Format format_of_output(const std::string& path) { return format_of_path(path).value_or(Format::Text); }

Format chosen_format(const ReportOptions& options) {
  return options.format ? *options.format : format_of_output(options.output);
}

// Writes `profile` in `format`; `at_peak` is the recording read up to its peak of live
// bytes (read_at_peak), for --peak and the HTML's peak view.
void write_profile(const profile::Profile& profile, const profile::Profile* at_peak, const ReportOptions& options,
                   Format format, std::ostream& out) {
  bool live = options.live || options.peak;
  const profile::Profile& viewed = options.peak ? *at_peak : profile;
  if (live) check_live_view(viewed);
  switch (format) {
    case Format::Pprof: {
      pprof::Profile converted = to_pprof(viewed, heap_view(viewed, true), live);
      if (options.peak)
        converted.comments.push_back("live at the peak of live bytes, " +
                                     format_duration(peak_moment(profile).nanos) + " into the recording");
      out << pprof::gzip(pprof::encode(converted));
      return;
    }
    case Format::Collapsed: write_collapsed(viewed, heap_view(viewed), live, options.value, out); return;
    case Format::Html: write_flame_graph(profile, at_peak, options, out); return;
    case Format::Json:
    case Format::Text:
    case Format::Jfr: {
      Report r = options.peak ? build_peak_report(profile, *at_peak, options) : build_report(profile, options);
      if (format == Format::Json)
        write_json_report(r, out);
      else
        write_text_report(r, out);
      return;
    }
  }
}

Diff write_diff(const profile::Profile& base, const profile::Profile& now, const ReportOptions& options, Format format,
                std::ostream& out) {
  if (format == Format::Pprof) throw ReportError("--diff writes text, json, collapsed or html, not pprof");
  Diff diff = diff_profiles(base, now, options.live);
  diff.base_file = options.diff_base;
  diff.confidence = options.gate.confidence;
  diff.new_file = files_text(options.files);
  if (format == Format::Json)
    write_diff_json(diff, options.top, out);
  else if (format == Format::Collapsed)
    write_diff_collapsed(diff, options.value, out);
  else if (format == Format::Html)
    write_diff_flame_graph(diff, out);
  else
    write_diff_text(diff, options.top, options.width, out);
  return diff;
}

// The files in the order of their recordings' starts (the chunks of a looping
// recording in the order they were cut, whatever their names). `current` names the
// file being read, for messages.
std::vector<std::string> in_time_order(const std::vector<std::string>& files, std::string& current) {
  if (files.size() == 1) return files;
  std::vector<std::pair<int64_t, std::string>> started;
  for (const std::string& file : files) {
    current = file;
    for (const auto& [start, earlier] : started) {
      std::error_code ignored;
      if (fs::equivalent(file, earlier, ignored))
        throw ReportError(file == earlier ? "given twice" : "given twice (also as " + earlier + ")");
    }
    MappedFile mapped = jfr::map_recording(file);
    started.emplace_back(jfr::parse_chunk_header(mapped.bytes()).start_nanos, file);
  }
  std::stable_sort(started.begin(), started.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> ordered;
  for (auto& [start, file] : started) ordered.push_back(std::move(file));
  return ordered;
}

// The profile as reported: the samples the options select, their stacks simplified;
// with `until_nanos`, only up to that moment (warnings were told by the first reading).
// `current` names the file being read, for messages.
profile::Profile read_reported(const std::vector<std::string>& files, const SampleFilter& filter,
                               const std::vector<ContextFilter>& tags, const profile::StackSimplification& stacks,
                               bool quiet, std::ostream& err, std::string& current,
                               std::optional<int64_t> until_nanos = std::nullopt) {
  SampleSelection selection(filter, tags, until_nanos.value_or(INT64_MAX));
  profile::ProfileReader reader(&selection);
  for (const std::string& file : files) {
    current = file;
    ProgressLine progress(err, file, !quiet);
    reader.read(file, progress.callback());
  }
  profile::Profile profile = reader.finish();
  // Several files' warnings name their file.
  std::string about = files.size() == 1 ? files.front() + ": " : "";
  if (!until_nanos)
    for (const auto& w : profile.warnings) err << "nmprof report: warning: " << about << w << "\n";
  selection.finish(profile);
  profile::simplify_stacks(profile, stacks);
  return profile;
}

// The profile keeps sums, not samples: what was live at the peak of live bytes is the
// live view of the recording read again up to that moment. Needed by --peak, and by
// the HTML page (its peak view) when there is anything live to see.
std::optional<profile::Profile> read_at_peak(const profile::Profile& whole, const ReportOptions& options, Format format,
                                             std::ostream& err, std::string& current) {
  if (!options.peak && format != Format::Html) return std::nullopt;
  std::optional<int64_t> peak;
  try {
    peak = live_peak(whole).time_nanos;
  } catch (const ReportError&) {
    if (options.peak) throw;
    return std::nullopt;  // a page without a peak view
  }
  return read_reported(options.files, options.samples, options.filters, options.stacks, options.quiet, err, current,
                       peak);
}

// run's --fail-on-live: the exit status it asks for, and the reason on `out`.
int gate_status(const profile::Profile* profile, std::optional<uint64_t> max_live, double confidence,
                std::ostream& out) {
  if (!max_live) return 0;
  Verdict verdict;
  try {
    if (!profile) throw ReportError("the recording could not be read");
    verdict = live_gate(*profile, *max_live, confidence);
  } catch (const ReportError& e) {
    verdict = {Verdict::Outcome::Fail, std::string("--fail-on-live cannot be judged: ") + e.what()};
  }
  if (verdict.outcome != Verdict::Outcome::Pass) out << "nmprof: " << verdict_text(verdict) << "\n";
  return gate_exit_status(verdict);
}

}  // namespace

int run_report(const ReportOptions& given, std::ostream& out, std::ostream& err) {
  const std::string prefix = "nmprof report: ";
  ReportOptions options = given;
  if (options.output == "-") options.output.clear();  // standard output, as without -o
  if (!options.wide && options.output.empty()) options.width = terminal_width(STDOUT_FILENO);
  if (options.wide) options.width = kWideTextWidth;
  options.colour = options.output.empty() && terminal_colour(STDOUT_FILENO);
  Format format = chosen_format(options);
  if (format == Format::Jfr) {
    err << prefix << options.output << ": report writes " << report_format_choices() << ", not JFR\n";
    return 1;
  }
  if (format == Format::Pprof && options.output.empty() && isatty(STDOUT_FILENO)) {
    err << prefix << "pprof output is binary: give -o FILE.pb.gz\n";
    return 1;
  }
  std::vector<std::string> inputs = options.files;
  inputs.push_back(options.diff_base);
  for (const std::string& input : inputs) {
    std::error_code ignored;  // an input that does not exist is named when it is read
    if (!options.output.empty() && !input.empty() && fs::equivalent(options.output, input, ignored)) {
      err << prefix << "-o " << options.output << " is the recording being read (" << input
          << "); name another file\n";
      return 1;
    }
  }
  if (options.gate.max_growth && options.diff_base.empty()) {
    err << prefix << "--fail-on-growth compares with an earlier recording: give --diff BASE\n";
    return cli::kExitUsage;
  }
  std::string current = options.files.front();  // the file being read, for messages
  try {
    options.files = in_time_order(options.files, current);
    std::optional<cli::OutputFile> file;
    std::string error;
    if (!options.output.empty() && !file.emplace(options.output).open(&error)) {
      err << prefix << error << "\n";
      return 1;
    }
    std::ostream& sink = file ? file->stream() : out;
    profile::Profile profile =
        read_reported(options.files, options.samples, options.filters, options.stacks, options.quiet, err, current);
    const std::string all_files = files_text(options.files);  // for what is wrong with them together
    current = all_files;
    Verdict verdict;
    if (options.peak && !options.diff_base.empty()) throw ReportError("--peak and --diff do not go together");
    if (options.diff_base.empty()) {
      std::optional<profile::Profile> at_peak = read_at_peak(profile, options, format, err, current);
      current = all_files;
      write_profile(profile, at_peak ? &*at_peak : nullptr, options, format, sink);
    } else {
      SampleFilter base_filter = options.samples;
      base_filter.pids.clear();  // the earlier run had other pids
      profile::Profile base = read_reported({options.diff_base}, base_filter, options.filters, options.stacks,
                                            options.quiet, err, current);
      current = all_files;
      Diff diff = write_diff(base, profile, options, format, sink);
      for (const auto& w : diff.warnings) err << prefix << "warning: " << w << "\n";
      if (options.gate.max_growth)
        verdict = growth_gate(diff, profile, *options.gate.max_growth, options.gate.confidence);
    }
    if (file && !file->commit(&error)) {
      err << prefix << error << "\n";
      return 1;
    }
    if (!file && !out.flush()) {
      // A reader that went away (`| head`) wants no more, and no complaint either.
      if (errno != EPIPE) err << prefix << "cannot write to standard output: " << strerror(errno) << "\n";
      return 1;
    }
    if (options.gate.max_live && verdict.outcome != Verdict::Outcome::Fail) {
      Verdict live = live_gate(profile, *options.gate.max_live, options.gate.confidence);
      if (live.outcome != Verdict::Outcome::Pass) verdict = live;
    }
    if (verdict.outcome != Verdict::Outcome::Pass) err << prefix << verdict_text(verdict) << "\n";
    return gate_exit_status(verdict);
  } catch (const std::system_error& e) {
    err << prefix << e.what() << "\n";
  } catch (const jfr::FormatError& e) {
    err << prefix << current << ": " << e.what() << "\n";
  } catch (const ReportError& e) {
    err << prefix << current << ": " << e.what() << "\n";
  }
  return 1;
}

std::string recording_path(const std::string& output, bool keep_jfr) {
  std::optional<Format> format = format_of_path(output);
  if (!format || format == Format::Jfr) return output;
  fs::path path(output);
  std::string name = path.filename().string();
  std::string stem = name.substr(0, name.rfind(format == Format::Pprof && name.ends_with(".pb.gz") ? ".pb.gz"
                                                                                                   : path.extension().string()));
  return (path.parent_path() / (keep_jfr ? stem + ".jfr" : ".nmprof-" + stem + ".jfr")).string();
}

int deliver_recording(const Delivery& d, std::ostream& out) {
  bool converted = d.recording == d.output;
  std::optional<profile::Profile> profile;
  std::string problem;
  try {
    // Quiet and nothing to convert: no stack is shown, so no frame needs its line.
    bool stacks_shown = !d.quiet || !converted;
    profile = profile::read_profile(d.recording, {}, nullptr,
                                    stacks_shown ? profile::NativeLines::Resolve : profile::NativeLines::Skip);
    profile::simplify_stacks(*profile, {});
    if (!converted) {
      cli::OutputFile file(d.output);
      ReportOptions options;
      options.files = {d.recording};
      if (!d.keep_jfr) options.converted_to = d.output;
      Format format = format_of_output(d.output);
      options.live = format == Format::Pprof && has_live_data(*profile);  // opens on inuse_space
      options.quiet = true;
      std::string current;
      std::optional<profile::Profile> at_peak = read_at_peak(*profile, options, format, out, current);
      if (!file.open(&problem)) throw ReportError(problem);
      write_profile(*profile, at_peak ? &*at_peak : nullptr, options, format, file.stream());
      if (!file.commit(&problem)) throw ReportError(problem);
      converted = true;
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  // Paths as the user typed them: a newline in one is not a line of its own.
  std::string output_shown = text::escape_controls(d.output), recording_shown = text::escape_controls(d.recording);
  if (!converted) {
    out << "nmprof: the recording could not be converted to " << output_shown << " (" << problem
        << "); it is kept in " << recording_shown << "\n";
    return cli::kExitFailure;
  }
  bool jfr_kept = d.recording == d.output || d.keep_jfr;
  if (!jfr_kept) fs::remove(d.recording);
  std::string kept = jfr_kept && d.recording != d.output ? " (recording: " + recording_shown + ")" : "";
  if (d.quiet || !profile) {
    out << "nmprof: profile written to " << output_shown << kept;
    if (!profile) out << ", but it cannot be summarized: " << problem;
    out << "\n";
  } else {
    print_run_summary(*profile, output_shown + kept, jfr_kept ? d.recording : "", d.top, out, d.live_label,
                      d.programs_unrecorded, d.confidence);
    if (!jfr_kept && format_of_output(d.output) == Format::Pprof)
      out << "  more: go tool pprof -top " << shell_quote(d.output) << "\n";
  }
  return gate_status(profile ? &*profile : nullptr, d.fail_on_live, d.confidence, out);
}

void print_run_summary(const profile::Profile& profile, const std::string& file, const std::string& recording,
                       size_t top, std::ostream& out, const std::string& live_label, bool programs_unrecorded,
                       double confidence) {
  const std::string indent = "  ";
  const size_t width = terminal_width(STDERR_FILENO);  // run and attach print their summary on stderr
  out << "nmprof: profile written to " << file;
  if (profile.processes.size() > 1) out << " (" << profile.processes.size() << " processes)";
  out << "\n";
  for (const auto& w : profile.warnings) write_wrapped(out, indent + "warning: ", w, width);
  Report r;
  try {
    ReportOptions options;
    options.top = top;
    options.gate.confidence = confidence;
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
  if (r.allocated.samples == 0) {
    write_wrapped(out, indent,
                  programs_unrecorded ? "Nothing was sampled in the programs recorded; the warnings above name those "
                                        "that left no recording."
                                      : nothing_sampled_text(r),
                  width);
    return;
  }
  bool live = r.options.live;
  if (live) write_wrapped(out, indent + pad_right(live_label + ":", 13) + " ", live_text(r), width);
  out << indent << "allocated:    " << totals_text(r, r.allocated, false) << "\n";
  if (r.timeline && !r.timeline->live_bytes.empty()) out << indent << "peak live:    " << peak_live_text(r) << "\n";
  for (const auto& note : r.notes) write_wrapped(out, indent + "warning: ", note, width);
  out << indent << "top stacks by " << (live ? "live" : "allocated") << " bytes:\n";
  write_compact_stacks(r, r.stacks, r.view_totals.bytes, width, out);
  if (recording.empty()) return;
  out << indent << "more: nmprof report " << shell_quote(recording) << (live ? " --live" : "") << "\n";
  if (r.live && r.timeline && ended_well_below_peak(r.live->totals.bytes, r.timeline->peak_live_bytes))
    out << indent << "peak: nmprof report " << shell_quote(recording) << " --peak\n";
}

}  // namespace nmprof::report
