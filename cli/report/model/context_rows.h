// Samples by the context they were taken in (nmprof.h): ranked by the value of an
// attribute, the span or the local root span (--by attribute:NAME, span,
// local-root-span), and selected by KEY=VALUE (--tag), where KEY is a context
// attribute, a span id's name (spanId, span_id; localRootSpanId, local_root_span_id,
// or pprof's label names) or a static tag of the recording.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/model/aggregation.h"
#include "profile/profile.h"

namespace nmprof::report {

struct ContextKey {
  enum class Kind { Attribute, Span, LocalRootSpan };
  Kind kind = Kind::Attribute;
  std::string attribute;  // for Kind::Attribute
};
// Whether --tag's key names the span (Kind::Span) or local root span id: as the
// recording's field (spanId), in snake case (span_id) or as pprof's label.
bool is_span_key(std::string_view key, ContextKey::Kind kind);
// "attribute:route", "span", "local-root-span".
std::string context_key_name(const ContextKey& key);

struct ContextRow {
  std::string value;  // "" for samples without one
  Totals totals;
};

// Over Profile::allocations() by index, allocated or live; most bytes first.
std::vector<ContextRow> by_context(const profile::Profile& profile, std::span<const uint32_t> allocations,
                                   const ContextKey& key, bool live);

struct ContextFilter {
  std::string key;
  std::string value;
};

// "--tag route=/checkout --tag tenant=a".
std::string filters_text(const std::vector<ContextFilter>& filters);
// Whether an allocation matches every filter.
bool matches(const profile::Profile& profile, const profile::SampleOrigin& a, const std::vector<ContextFilter>& filters);

}  // namespace nmprof::report
