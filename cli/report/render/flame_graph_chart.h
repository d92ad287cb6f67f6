// The memory-over-time chart of a flame graph page and what selecting on it needs: the
// run in at most kMaxBins time bins (whole bins of the profile's Lifetimes), per row of
// the page the cells of Lifetimes in those bins (bytes and count allocated in one bin
// and freed in another, or not freed), and the highest live total within each bin
// (from the profile's TimeSeries, so that a peak inside a bin still shows). Bins are
// merged further while there are more than kMaxCells cells, to keep the page small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "cli/report/model/report.h"
#include "cli/report/render/json_writer.h"
#include "profile/profile.h"

namespace nmprof::report {

class Chart {
 public:
  static constexpr size_t kMaxBins = 256;
  static constexpr size_t kMaxCells = 100'000;
  static constexpr uint32_t kNoRow = UINT32_MAX;

  // row_of_allocation: the page row of each of the profile's allocations (kNoRow: not
  // shown). `live`: the recording tracked frees. Empty when nothing was sampled.
  Chart(const profile::Profile& profile, const std::vector<uint32_t>& row_of_allocation, bool live);
  bool empty() const { return count_ == 0; }

  // "time": {start, bin, bins, end (ns, from the start of the recording), high (per
  // bin; with live data)}, and "cells": per row, flat quadruples in order of allocated
  // bin [allocated bin less the previous cell's, bins until freed (-1: not freed),
  // bytes, count]: short numbers.
  void write(JsonWriter& json, size_t rows) const;

 private:
  // The chart bin of a bin of the profile's Lifetimes.
  size_t bin_of(int64_t lifetime_bin) const;
  void take_cells(const profile::Profile& profile, const std::vector<uint32_t>& row_of_allocation);
  void take_highs(const profile::TimeSeries& series);

  TimeRange run_;
  int64_t first_ = 0;   // the Lifetimes bin chart bin 0 begins with
  int64_t merged_ = 1;  // Lifetimes bins per chart bin
  size_t count_ = 0;
  int64_t start_nanos_ = 0, bin_nanos_ = 0;
  std::map<std::tuple<uint32_t, size_t, int64_t>, profile::Totals> cells_;  // row, allocated bin, freed bin (-1)
  std::vector<double> high_;
};

}  // namespace nmprof::report
