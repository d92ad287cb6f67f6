// How sure a sampled estimate is (docs/sampling.md): its standard error, from the
// variance its samples estimate, and the half-width of its normal interval at a
// confidence. One confidence serves a whole report: the intervals it shows and the
// CI gates it decides.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "profile/profile.h"
#include "profile/totals.h"

namespace nmprof::report {

constexpr double kDefaultConfidence = 0.95;

// The z of the two-sided normal interval that holds the truth with probability
// `confidence` (0 < confidence < 1): 1.96 for 0.95.
double interval_z(double confidence);

inline double standard_error(double variance) { return variance > 0 ? std::sqrt(variance) : 0; }

// Half the width of the interval of the estimate's bytes, or of its count.
inline double bytes_margin(const profile::Totals& t, double z) { return z * standard_error(t.bytes_variance); }
inline double count_margin(const profile::Totals& t, double z) { return z * standard_error(t.count_variance); }

// The largest interval any process of `profile` sampled at (under --rate, the largest
// it reached); 0 when every allocation was recorded, or the recording does not say.
// Each byte's variance is at most the interval it was sampled at.
uint64_t largest_interval(const profile::Profile& profile);

// --confidence: a number between 0 and 1 ("0.95"); nothing when it is not one.
std::optional<double> parse_confidence(const std::string& text);
// "95%", "99.9%": the confidence as the text shows it.
std::string confidence_text(double confidence);

}  // namespace nmprof::report
