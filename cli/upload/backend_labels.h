// The labels of an uploaded profile, as the backends read them. The files on disk
// keep nmprof's own (docs/formats.md); what is sent differs in two ways:
// - span_id is 16 hex digits, as Pyroscope decodes it to link samples to spans
//   (grafana/pyroscope pkg/pprof/pprof.go: decodeSpanID) and as OpenTelemetry writes
//   span ids; nmprof's files have it in decimal, as Datadog's profiles do;
// - the local root span id is left out: Pyroscope makes every sample label but span_id
//   and trace_id a label of the series (pkg/model/pprofsplit), which would be one
//   series per request, and its name, with spaces, is one Pyroscope refuses
//   (pkg/validation/validate.go), failing the whole upload.
// For Pyroscope, a context attribute whose name it would refuse (a '$' in it) is left
// out too, and named in `dropped`.
#pragma once

#include <set>
#include <string>

#include "formats/pprof/pprof_profile.h"

namespace nmprof::upload {

void adapt_labels(pprof::Profile& profile, bool pyroscope, std::set<std::string>* dropped);

}  // namespace nmprof::upload
