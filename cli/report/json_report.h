// The JSON form of a report; the schema is documented in doc/report-json.md.
#pragma once

#include <ostream>

#include "cli/report/report.h"

namespace nmprof::report {

constexpr int kJsonSchemaVersion = 2;  // 2: statistics keys in snake_case

void write_json_report(const Report& report, std::ostream& out);

}  // namespace nmprof::report
