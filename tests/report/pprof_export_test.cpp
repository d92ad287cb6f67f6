// The Go-style heap profile made of a hand-built profile: values per stack, live
// values, locations innermost first, one function per function, the labels hook.
#include "cli/report/pprof_export.h"

#include <gtest/gtest.h>

#include "cli/report/heap_view.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

using testing::ProfileMaker;

std::string function_of(const pprof::Profile& p, uint64_t location_id) {
  return p.functions[p.locations[location_id - 1].lines[0].function_id - 1].name;
}

// Allocations split by address parity: a stand-in for span ids or context attributes.
class ByParity : public SampleLabels {
 public:
  uint32_t group(const profile::Allocation& a) override { return static_cast<uint32_t>(a.address & 1) + 1; }
  std::vector<pprof::Label> labels(uint32_t group) const override {
    return {{"parity", group == 1 ? "even" : "odd", 0, {}, false}};
  }
};

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
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), nullptr, true);
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
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile), nullptr, true);
  ASSERT_EQ(out.sample_types.size(), 2u);
  EXPECT_EQ(out.default_sample_type, "alloc_space");
}

TEST(PprofExport, LabelGroupsSplitAStack) {
  ProfileMaker m = two_stacks();
  ByParity parity;
  pprof::Profile out = to_pprof(m.profile, heap_view(m.profile, &parity), &parity, false);
  ASSERT_EQ(out.samples.size(), 2u);  // leak is even, both churn blocks odd
  EXPECT_EQ(out.samples[0].labels[0].text, "even");
  EXPECT_EQ(out.samples[1].labels[0].text, "odd");
  EXPECT_EQ(out.samples[1].labels[1].key, "bytes");
  ProfileMaker mixed = two_stacks();
  mixed.alloc(0, mixed.profile.allocations[1].stack, 6, 0x40, 50, 2);
  pprof::Profile split = to_pprof(mixed.profile, heap_view(mixed.profile, &parity), &parity, false);
  EXPECT_EQ(split.samples.size(), 3u);
}

}  // namespace
}  // namespace nmprof::report
