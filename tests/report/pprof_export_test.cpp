// The Go-style heap profile made of a hand-built profile: values per stack, live
// values, locations innermost first, one function per function, the labels hook.
#include "cli/report/render/pprof_export.h"

#include <gtest/gtest.h>

#include "cli/report/model/heap_view.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;

std::string function_of(const pprof::Profile& p, uint64_t location_id) {
  return p.functions[p.locations[location_id - 1].lines[0].function_id - 1].name;
}

ProfileMaker two_stacks() {
  ProfileMaker m;
  uint32_t p = m.process(7, 0, 100);
  m.profile.processes[p].settings["live"] = "true";
  uint32_t leak = m.stack({"leak", "main"}), churn = m.stack({"churn", "main"});
  m.alloc(p, leak, 1, 0x10, 100, 10);   // live: 1000 B, 10 blocks
  m.alloc(p, churn, 2, 0x21, 50, 4);    // freed
  m.alloc(p, churn, 3, 0x31, 50, 4.5);  // freed
  m.free(p, 4, 0x21);
  m.free(p, 5, 0x31);
  return m;
}

TEST(PprofExport, HasGosHeapTypesWithEstimatesPerStack) {
  ProfileMaker m = two_stacks();
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), true);
  ASSERT_EQ(out.sample_types.size(), 4u);
  EXPECT_EQ(out.sample_types[3].type, "inuse_space");
  EXPECT_EQ(out.default_sample_type, "inuse_space");
  ASSERT_EQ(out.samples.size(), 2u);
  const pprof::Sample& leak = out.samples[0];
  EXPECT_EQ(function_of(out, leak.location_ids[0]), "leak");
  EXPECT_EQ(function_of(out, leak.location_ids[1]), "main");
  EXPECT_EQ(leak.values, (std::vector<int64_t>{10, 1000, 10, 1000}));
  const pprof::Sample& churn = out.samples[1];
  EXPECT_EQ(churn.values, (std::vector<int64_t>{9, 425, 0, 0}));  // 8.5 rounds up, 50 x 8.5 = 425
  EXPECT_EQ(leak.location_ids[1], churn.location_ids[1]);          // one location for main
  ASSERT_EQ(churn.labels.size(), 1u);
  EXPECT_EQ(churn.labels[0].key, "bytes");
  EXPECT_EQ(churn.labels[0].number, 50);
  ASSERT_FALSE(out.mappings.empty());
  EXPECT_TRUE(out.mappings[0].has_functions);
}

TEST(PprofExport, WithoutFreesHasOnlyAllocationTypes) {
  ProfileMaker m;
  uint32_t p = m.process(7, 0, 100);
  m.alloc(p, m.stack({"f"}), 1, 0x10, 100);
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), true);
  ASSERT_EQ(out.sample_types.size(), 2u);
  EXPECT_EQ(out.default_sample_type, "alloc_space");
}

TEST(PprofExport, SamplesCarryTagsAndContextAsLabels) {
  ProfileMaker m;
  uint32_t p = m.process(7, 0, 100);
  m.profile.processes[p].tags["service"] = "shop";
  m.profile.context_attributes = {"route", "tenant"};
  uint32_t st = m.stack({"handle", "main"});
  profile::Sample checkout = m.sample(p, st, 1, 0x10, 100);
  checkout.span_id = 42;
  checkout.local_root_span_id = 40;
  checkout.context = m.profile.add_context({{"/checkout", ""}});
  m.profile.add_allocation(checkout);
  checkout.address = 0x20;
  m.profile.add_allocation(checkout);      // same context: same pprof sample
  m.alloc(p, st, 3, 0x30, 10);             // no context: its own sample
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile, true), false);
  ASSERT_EQ(out.samples.size(), 2u);
  auto label = [](const pprof::Sample& s, const std::string& key) -> const pprof::Label* {
    for (const auto& l : s.labels)
      if (l.key == key) return &l;
    return nullptr;
  };
  const pprof::Sample& in_request = out.samples[0];
  EXPECT_EQ(in_request.values[1], 200);
  // Span ids as Pyroscope and Datadog name them, decimal strings.
  ASSERT_TRUE(label(in_request, "span_id") && label(in_request, "local root span id") && label(in_request, "route"));
  EXPECT_FALSE(label(in_request, "span_id")->numeric);
  EXPECT_EQ(label(in_request, "span_id")->text, "42");
  EXPECT_EQ(label(in_request, "local root span id")->text, "40");
  EXPECT_EQ(label(in_request, "route")->text, "/checkout");
  EXPECT_EQ(label(in_request, "tenant"), nullptr);  // unset values are left out
  EXPECT_EQ(label(in_request, "service")->text, "shop");
  const pprof::Sample& outside = out.samples[1];
  EXPECT_EQ(label(outside, "span_id"), nullptr);
  EXPECT_EQ(label(outside, "route"), nullptr);
  EXPECT_EQ(label(outside, "service")->text, "shop");
  // Without context, the stack is one sample.
  EXPECT_EQ(to_pprof(m.profile, heap_view(m.profile), false).samples.size(), 1u);
}

TEST(PprofExport, PhpFunctionsNameTheirScriptAndLine) {
  ProfileMaker m;
  uint32_t p = m.process(7, 0, 100, "php app.php");
  profile::Stack s;
  s.frames = {m.profile.add_frame({"_emalloc", "php8.2", profile::FrameKind::Native, -1, {}}),
              m.profile.add_frame({"str_repeat", "[internal function]", profile::FrameKind::Php, -1, {}}),
              m.profile.add_frame({"render", "/srv/app/view.php", profile::FrameKind::Php, 12, {}}),
              m.profile.add_frame({"render", "/srv/app/other.php", profile::FrameKind::Php, 40, {}})};
  m.alloc(p, m.profile.add_stack(s), 1, 0x10, 100);
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), false);
  ASSERT_EQ(out.samples.size(), 1u);
  const auto& ids = out.samples[0].location_ids;
  auto function = [&](size_t i) { return out.functions[out.locations[ids[i] - 1].lines[0].function_id - 1]; };
  EXPECT_EQ(function(1).name, "str_repeat");
  EXPECT_EQ(function(1).filename, "");
  EXPECT_EQ(function(2).name, "render");
  EXPECT_EQ(function(2).filename, "/srv/app/view.php");
  EXPECT_EQ(out.locations[ids[2] - 1].lines[0].line, 12);
  EXPECT_EQ(function(3).filename, "/srv/app/other.php");  // another function of the same name
  // Scripts are not mappings: only the native library is.
  EXPECT_NE(out.locations[ids[0] - 1].mapping_id, 0u);
  for (size_t i = 1; i < ids.size(); i++) EXPECT_EQ(out.locations[ids[i] - 1].mapping_id, 0u) << i;
  ASSERT_EQ(out.mappings.size(), 1u);
}

// A function inlined at an address is a line of the location of its caller's frame,
// innermost first, as pprof has it; the caller alone elsewhere is a location of its own.
TEST(PprofExport, InlinedFramesAreLinesOfOneLocation) {
  ProfileMaker m;
  uint32_t p = m.process(7, 0, 100);
  m.profile.processes[p].modules["app"].path = "/bin/app";
  auto frame = [&](const char* function, int32_t line, bool inlined) {
    return m.profile.add_frame({function, "app", profile::FrameKind::Native, line, "app.cc", {}, inlined});
  };
  uint32_t inner = frame("fill", 10, true), middle = frame("make", 16, true), outer = frame("build", 23, false);
  uint32_t caller = frame("main", 40, false);
  m.alloc(p, m.profile.add_stack({{inner, middle, outer, caller}}), 1, 0x10, 100);
  m.alloc(p, m.profile.add_stack({{outer, caller}}), 2, 0x20, 100);
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), false);
  ASSERT_EQ(out.samples.size(), 2u);
  const auto& inlined = out.samples[0].location_ids;
  ASSERT_EQ(inlined.size(), 2u);
  const pprof::Location& at = out.locations[inlined[0] - 1];
  ASSERT_EQ(at.lines.size(), 3u);
  std::vector<std::pair<std::string, int64_t>> lines;
  for (const auto& line : at.lines) lines.emplace_back(out.functions[line.function_id - 1].name, line.line);
  EXPECT_EQ(lines, (std::vector<std::pair<std::string, int64_t>>{{"fill", 10}, {"make", 16}, {"build", 23}}));
  EXPECT_EQ(out.mappings[at.mapping_id - 1].filename, "/bin/app");
  EXPECT_EQ(out.samples[0].location_ids[1], out.samples[1].location_ids[1]);  // main
  const auto& alone = out.samples[1].location_ids;
  EXPECT_NE(alone[0], inlined[0]);
  EXPECT_EQ(out.locations[alone[0] - 1].lines.size(), 1u);
  EXPECT_EQ(function_of(out, alone[0]), "build");
}

}  // namespace
}  // namespace nmprof::report
