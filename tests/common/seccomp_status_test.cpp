#include "common/seccomp_status.h"

#include <gtest/gtest.h>

namespace nmprof {
namespace {

TEST(SeccompStatus, ReadsModeAndFilters) {
  SeccompStatus s =
      parse_seccomp_status("Name:\tx\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t3\nSpeculation:\t-\n");
  EXPECT_EQ(s.mode, 2);
  EXPECT_EQ(s.filters, 3);
  EXPECT_TRUE(s.filtered());
  EXPECT_EQ(s.filter_count(), 3);
}

TEST(SeccompStatus, NoneWhenTheProcessHasNoFilter) {
  SeccompStatus s = parse_seccomp_status("Name:\tx\nSeccomp:\t0\nSeccomp_filters:\t0\n");
  EXPECT_FALSE(s.filtered());
  EXPECT_EQ(s.filter_count(), 0);
}

TEST(SeccompStatus, AKernelThatDoesNotCountFiltersCountsOne) {
  SeccompStatus s = parse_seccomp_status("Seccomp:\t2\n");
  EXPECT_EQ(s.filters, -1);
  EXPECT_EQ(s.filter_count(), 1);
  EXPECT_FALSE(parse_seccomp_status("").filtered());
  // Only a field of its own: "Seccomp_filters:" is not "Seccomp:".
  EXPECT_FALSE(parse_seccomp_status("Seccomp_filters:\t4\n").filtered());
}

}  // namespace
}  // namespace nmprof
