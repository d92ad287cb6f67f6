#include "cli/options/report_view_options.h"

#include <regex>

#include "cli/options/count_check.h"
#include "cli/options/confidence_option.h"
#include "cli/options/size_option.h"

namespace nmprof::cli {
namespace {

constexpr int64_t kMaxPid = int64_t{1} << 22;  // Linux's largest pid_max
constexpr size_t kMaxDepth = 1000000;

template <class T>
CLI::Option* add_repeatable(CLI::App* report, const std::string& name, std::vector<T>& target, const std::string& help) {
  return report->add_option(name, target, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

const CLI::Validator& regex_check() {
  static const CLI::Validator check(
      [](std::string& pattern) -> std::string {
        try {
          std::regex compiled(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return "'" + pattern + "' is not a regular expression (" + e.what() + ")";
        }
        return {};
      },
      "");  // --help names the value REGEX
  return check;
}

CLI::Option* add_regexes(CLI::App* report, const std::string& name, std::vector<std::string>& target,
                         const std::string& help) {
  return add_repeatable(report, name, target, help)->type_name("REGEX")->check(regex_check());
}

CLI::Option* add_offset(CLI::App* report, const std::string& name, std::optional<int64_t>& target,
                        const std::string& help) {
  auto set = [&target, name](const std::string& text) {
    target = report::parse_offset(text);
    if (!target) throw CLI::ValidationError(name, "'" + text + "' is not a time (examples: 10s, 250ms, 2m)");
  };
  return report->add_option_function<std::string>(name, set, help)->type_name("TIME");
}

void add_filter_options(CLI::App* report, report::SampleFilter& filter) {
  add_repeatable(report, "--pid", filter.pids, "Only samples of this process (repeatable)")
      ->check(CLI::Range(int64_t{1}, kMaxPid).description(""))
      ->type_name("PID");
  add_repeatable(report, "--thread", filter.threads, "Only samples taken on this thread: its name or id (repeatable)")
      ->type_name("NAME|TID");
  add_offset(report, "--from", filter.from_nanos, "Only samples taken TIME after the recording started or later");
  add_offset(report, "--to", filter.to_nanos,
             "Only samples taken up to TIME after the recording started; live means live at that time");
  add_regexes(report, "--include", filter.include, "Only stacks with a function matching REGEX (repeatable)");
  add_regexes(report, "--exclude", filter.exclude, "Leave out stacks with a function matching REGEX (repeatable)");
}

void add_stack_options(CLI::App* report, profile::StackSimplification& stacks) {
  report->add_flag_callback("--frame-types", [&stacks] { stacks.merge_java_frame_types = false; },
                            "Keep a Java method's interpreted, JIT-compiled and inlined frames apart (merged by "
                            "default)");
  report->add_flag_callback("--keep-frames", [&stacks] { stacks.fold_defaults = false; },
                            "Show allocator wrappers and runtime plumbing on top of stacks (folded by default; see "
                            "FOLDED FRAMES in man nmprof)");
  add_regexes(report, "--fold", stacks.fold_patterns,
              "Also fold frames on top of stacks whose function matches REGEX (repeatable)");
}

}  // namespace

void add_report_view_options(CLI::App* report, report::ReportOptions& options) {
  add_filter_options(report, options.samples);
  add_stack_options(report, options.stacks);
  report
      ->add_option_function<std::string>(
          "--sort",
          [&options](const std::string& key) {
            if (key != "self" && key != "total")
              throw CLI::ValidationError("--sort", "'" + key + "' is not one of self|total");
            options.sort_by_total = key == "total";
          },
          "Functions by self bytes (allocated in them; a PHP function's include the engine's frames inside it) or "
          "by total bytes (in them or their callees, pprof's -cum)")
      ->type_name("self|total")
      ->default_str("self");
  report->add_option("--peek", options.peek, "Show who calls the functions matching REGEX and what they call")
      ->type_name("REGEX")
      ->check(regex_check());
  report->add_flag("--wide", options.wide, "Never shorten names to fit the terminal (COLUMNS sets its width)");
  report->add_option("--depth", options.depth, "Frames shown per stack in the text report (0: all)")
      ->default_val(options.depth)
      ->check(count_check(0, kMaxDepth, "frames", "0: all"))
      ->type_name("N");
  add_size_option(report, "--fail-on-live", options.gate.max_live,
                  "Exit with status 3 when more than SIZE is live at the end of the recording (a CI gate; 4: too few "
                  "samples to tell)");
  add_size_option(report, "--fail-on-growth", options.gate.max_growth,
                  "With --diff BASE: exit with status 3 when live bytes (allocated bytes without live data) grew by "
                  "more than SIZE (4: too few samples to tell)");
  add_confidence_option(report, options.gate.confidence);
}

}  // namespace nmprof::cli
