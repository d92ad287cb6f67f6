// Report views by context: --by span / local-root-span / attribute:NAME and --tag.
#include <gtest/gtest.h>

#include "cli/report/model/context_rows.h"
#include "cli/report/model/report.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;

// Two routes and samples outside requests; process 0 tagged service=shop.
struct Example {
  ProfileMaker m;
  Example() {
    m.profile.context_attributes = {"route", "tenant"};
    uint32_t p = m.process(10, 0, 1000);
    m.profile.processes[p].tags["service"] = "shop";
    uint32_t s = m.stack({"main"});
    add(p, s, 1, 100, 4, {"/checkout", "a"}, 7, 5);
    add(p, s, 2, 100, 2, {"/checkout", "b"}, 8, 5);
    add(p, s, 3, 50, 1, {"/search", "a"}, 9, 9);
    add(p, s, 4, 10, 1, {}, 0, 0);
  }
  void add(uint32_t p, uint32_t s, uint64_t address, uint64_t size, float weight, std::vector<std::string> values,
           uint64_t span, uint64_t root) {
    profile::Sample sample = m.sample(p, s, static_cast<int64_t>(address), address, size, weight);
    sample.context = m.profile.add_context({std::move(values)});
    sample.span_id = span;
    sample.local_root_span_id = root;
    m.profile.add_allocation(sample);
  }
  std::vector<uint32_t> all() const { return {0, 1, 2, 3}; }
};

TEST(Context, RanksByAttributeWithNoneForSamplesWithout) {
  Example e;
  auto rows = by_context(e.m.profile, e.all(), {ContextKey::Kind::Attribute, "route"}, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].value, "/checkout");
  EXPECT_DOUBLE_EQ(rows[0].totals.bytes, 600);
  EXPECT_DOUBLE_EQ(rows[0].totals.count, 6);
  EXPECT_EQ(rows[0].totals.samples, 2u);
  EXPECT_EQ(rows[1].value, "/search");
  EXPECT_EQ(rows[2].value, "");
}

TEST(Context, RanksBySpanAndRootSpan) {
  Example e;
  auto spans = by_context(e.m.profile, e.all(), {ContextKey::Kind::Span, {}}, false);
  EXPECT_EQ(spans.size(), 4u);
  auto roots = by_context(e.m.profile, e.all(), {ContextKey::Kind::LocalRootSpan, {}}, false);
  ASSERT_EQ(roots.size(), 3u);
  EXPECT_EQ(roots[0].value, "5");
  EXPECT_DOUBLE_EQ(roots[0].totals.bytes, 600);
}

TEST(Context, FiltersByAttributeSpanAndStaticTag) {
  Example e;
  const auto& p = e.m.profile;
  auto count = [&](std::vector<ContextFilter> filters) {
    int n = 0;
    for (const auto& a : p.allocations()) n += matches(p, a, filters);
    return n;
  };
  EXPECT_EQ(count({{"route", "/checkout"}}), 2);
  EXPECT_EQ(count({{"route", "/checkout"}, {"tenant", "a"}}), 1);
  EXPECT_EQ(count({{"route", ""}}), 1);
  // The span ids by the recording's names, in snake case and as pprof's labels.
  for (const char* span : {"spanId", "span_id"}) EXPECT_EQ(count({{span, "9"}}), 1) << span;
  for (const char* root : {"localRootSpanId", "local_root_span_id", "local root span id"})
    EXPECT_EQ(count({{root, "5"}}), 2) << root;
  EXPECT_EQ(count({{"service", "shop"}}), 4);
  EXPECT_EQ(count({{"service", "other"}}), 0);
  EXPECT_EQ(count({{"nothing", "x"}}), 0);
}

TEST(Context, ReportByAttributeAfterAFilter) {
  Example e;
  ReportOptions options;
  ASSERT_FALSE(parse_by("attribute:tenant", options));
  options.filters = {{"route", "/checkout"}};
  Report r = build_report(e.m.profile, options);
  EXPECT_DOUBLE_EQ(r.allocated.bytes, 600);
  ASSERT_EQ(r.contexts.size(), 2u);
  EXPECT_EQ(r.contexts[0].value, "a");
  EXPECT_DOUBLE_EQ(r.contexts[0].totals.bytes, 400);
  EXPECT_DOUBLE_EQ(r.contexts_share, 1.0);
  EXPECT_EQ(r.tags.at("service"), "shop");
}

TEST(Context, LiveViewIsFilteredToo) {
  Example e;
  e.m.free(0, 500, 1);  // one /checkout block freed
  ReportOptions options;
  options.live = true;
  options.filters = {{"route", "/checkout"}};
  ASSERT_FALSE(parse_by("span", options));
  Report r = build_report(e.m.profile, options);
  EXPECT_DOUBLE_EQ(r.view_totals.bytes, 200);
  ASSERT_EQ(r.contexts.size(), 1u);
  EXPECT_EQ(r.contexts[0].value, "8");
}

TEST(Context, UnknownAttributeOrNoMatchIsAnError) {
  Example e;
  ReportOptions options;
  ASSERT_FALSE(parse_by("attribute:user", options));
  EXPECT_THROW(build_report(e.m.profile, options), ReportError);
  ReportOptions filtered;
  filtered.filters = {{"route", "/nowhere"}};
  EXPECT_THROW(build_report(e.m.profile, filtered), ReportError);
}

TEST(Context, ParseByRefusesWhatItDoesNotKnow) {
  ReportOptions options;
  EXPECT_TRUE(parse_by("attribute:", options));
  EXPECT_TRUE(parse_by("route", options));
  EXPECT_FALSE(parse_by("local-root-span", options));
  EXPECT_EQ(options.by, ReportOptions::By::Context);
  EXPECT_EQ(context_key_name(options.context), "local-root-span");
}

TEST(Context, EqualValuesShareOneContextWhateverTheTrailingEmptyValues) {
  profile::Profile p;
  p.context_attributes = {"route", "tenant"};
  EXPECT_EQ(p.add_context({{"", ""}}), 0u);
  uint32_t a = p.add_context({{"/x"}});
  EXPECT_EQ(p.add_context({{"/x", ""}}), a);
  EXPECT_EQ(p.attribute(a, "route"), "/x");
  EXPECT_EQ(p.attribute(a, "tenant"), "");
  EXPECT_EQ(p.attribute(a, "other"), "");
}

}  // namespace
}  // namespace nmprof::report
