#include "cli/upload/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace nmprof::upload {

Outcome outcome_of(const HttpResult& result) {
  switch (result.kind) {
    case HttpResult::Kind::Response:
      if (result.status >= 200 && result.status < 300) return Outcome::Delivered;
      // 408: Pyroscope's answer to a body it could not read whole.
      if (result.status == 408 || result.status == 429 || result.status >= 500) return Outcome::Retry;
      return Outcome::GiveUp;
    case HttpResult::Kind::Unreachable: return Outcome::Retry;
    case HttpResult::Kind::Tls:
    case HttpResult::Kind::Failed:
    case HttpResult::Kind::Aborted: return Outcome::GiveUp;
  }
  return Outcome::GiveUp;
}

Duration retry_delay(const Backoff& backoff, int failures, const HttpResult& result, double random) {
  if (result.retry_after) return std::clamp(Duration(*result.retry_after), Duration(0), backoff.longest_retry_after);
  double exponent = std::min(std::max(failures, 1) - 1, 30);
  Duration delay = std::min(backoff.first * std::exp2(exponent), backoff.longest);
  return delay * (0.5 + 0.5 * std::clamp(random, 0.0, 1.0));
}

}  // namespace nmprof::upload
