// A pprof profile as an OTLP ExportProfilesServiceRequest, encoded by hand from
// third_party/opentelemetry-proto (v1.11.0, profiles v1development): one resource
// (service.name, process.pid, host.name, the tags), one scope (nmprof), and one
// Profile per sample type (OTLP profiles have one each: alloc_objects, alloc_space,
// inuse_objects, inuse_space), sharing the request's dictionary. Sample labels (span
// ids, context attributes, the mean size) become sample attributes.
#pragma once

#include <string>
#include <vector>

#include "cli/upload/http_client.h"
#include "cli/upload/url.h"
#include "formats/pprof/pprof_profile.h"

namespace nmprof::upload {

struct OtlpSource {
  std::vector<pprof::Label> resource;  // string or int attributes
  std::string scope_name;
  std::string scope_version;
};

std::string encode_otlp(const pprof::Profile& profile, const OtlpSource& source);

// The OTLP/HTTP request that carries an encoded request to `endpoint` (the
// collector's profiles endpoint): binary protobuf, gzipped.
HttpRequest otlp_request(const Url& endpoint, const std::string& encoded);

}  // namespace nmprof::upload
