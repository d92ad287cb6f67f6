// The JSON form of a report; the schema is documented in docs/report-json.md.
#pragma once

#include <ostream>

#include "cli/report/model/diff_report.h"
#include "cli/report/model/report.h"

namespace nmprof::report {

constexpr int kJsonSchemaVersion = 2;  // 2: statistics keys in snake_case

void write_json_report(const Report& report, std::ostream& out);
// The JSON form of a diff: its totals, then the top stacks and functions by growth.
void write_diff_json(const Diff& diff, size_t top, std::ostream& out);

}  // namespace nmprof::report
