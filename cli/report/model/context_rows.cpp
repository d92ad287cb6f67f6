#include "cli/report/model/context_rows.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "cli/report/model/sample_labels.h"

namespace nmprof::report {
namespace {

using profile::Allocation;
using profile::Profile;

std::string id_text(uint64_t id) { return id ? std::to_string(id) : std::string(); }

std::string value_of(const Profile& profile, const Allocation& a, const ContextKey& key) {
  switch (key.kind) {
    case ContextKey::Kind::Span: return id_text(a.span_id);
    case ContextKey::Kind::LocalRootSpan: return id_text(a.local_root_span_id);
    case ContextKey::Kind::Attribute: break;
  }
  return profile.attribute(a.context, key.attribute);
}

bool is_attribute(const Profile& profile, const std::string& name) {
  return std::find(profile.context_attributes.begin(), profile.context_attributes.end(), name) !=
         profile.context_attributes.end();
}

bool matches(const Profile& profile, const profile::SampleOrigin& a, const ContextFilter& filter) {
  if (is_attribute(profile, filter.key)) return profile.attribute(a.context, filter.key) == filter.value;
  if (is_span_key(filter.key, ContextKey::Kind::Span)) return id_text(a.span_id) == filter.value;
  if (is_span_key(filter.key, ContextKey::Kind::LocalRootSpan))
    return id_text(a.local_root_span_id) == filter.value;
  const auto& tags = profile.processes[a.process].tags;
  auto tag = tags.find(filter.key);
  return tag != tags.end() && tag->second == filter.value;
}

}  // namespace

bool is_span_key(std::string_view key, ContextKey::Kind kind) {
  static constexpr std::string_view kSpan[] = {"spanId", "span_id", kSpanLabel};
  static constexpr std::string_view kLocalRootSpan[] = {"localRootSpanId", "local_root_span_id", kLocalRootSpanLabel};
  auto named = [key](const auto& names) { return std::find(std::begin(names), std::end(names), key) != std::end(names); };
  if (kind == ContextKey::Kind::Span) return named(kSpan);
  return kind == ContextKey::Kind::LocalRootSpan && named(kLocalRootSpan);
}

std::string context_key_name(const ContextKey& key) {
  switch (key.kind) {
    case ContextKey::Kind::Span: return "span";
    case ContextKey::Kind::LocalRootSpan: return "local-root-span";
    case ContextKey::Kind::Attribute: break;
  }
  return "attribute:" + key.attribute;
}

std::vector<ContextRow> by_context(const Profile& profile, std::span<const uint32_t> allocations,
                                   const ContextKey& key, bool live) {
  std::vector<ContextRow> rows;
  std::unordered_map<std::string, size_t> row_of_value;
  for (uint32_t i : allocations) {
    const Allocation& a = profile.allocations()[i];
    const Totals& totals = live ? a.live : a.allocated;
    if (totals.samples == 0) continue;
    std::string value = value_of(profile, a, key);
    auto [it, added] = row_of_value.try_emplace(value, rows.size());
    if (added) rows.push_back({std::move(value), {}});
    rows[it->second].totals.add(totals);
  }
  std::sort(rows.begin(), rows.end(), [](const ContextRow& x, const ContextRow& y) {
    if (x.totals.bytes != y.totals.bytes) return x.totals.bytes > y.totals.bytes;
    return x.value < y.value;
  });
  return rows;
}

std::string filters_text(const std::vector<ContextFilter>& filters) {
  std::string text;
  for (const auto& f : filters) text += (text.empty() ? "--tag " : " --tag ") + f.key + "=" + f.value;
  return text;
}

bool matches(const Profile& profile, const profile::SampleOrigin& a, const std::vector<ContextFilter>& filters) {
  return std::all_of(filters.begin(), filters.end(),
                     [&](const ContextFilter& f) { return matches(profile, a, f); });
}

}  // namespace nmprof::report
