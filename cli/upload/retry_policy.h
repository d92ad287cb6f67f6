// When an upload that failed is tried again: after a connection error, a 408, a 429
// or a 5xx, with exponential backoff and jitter (so that many nmprofs do not come back
// at the same moment), or when the server's Retry-After says. Any other answer is
// final: a 4xx means the server will not take this profile, however often it is sent.
#pragma once

#include <chrono>
#include <cstdint>

#include "cli/upload/http_client.h"

namespace nmprof::upload {

using Duration = std::chrono::duration<double>;  // seconds

enum class Outcome { Delivered, Retry, GiveUp };

Outcome outcome_of(const HttpResult& result);

struct Backoff {
  Duration first{1.0};  // after the first failure
  Duration longest{60.0};
  Duration longest_retry_after{3600.0};  // a server's Retry-After, capped
};

// The wait before the next attempt after `failures` (1, 2 ...) failed attempts of
// which `result` is the last; `random` in [0, 1) draws the jitter: the exponential
// delay is scaled into [1/2, 1] of itself. A Retry-After is honoured as it is.
Duration retry_delay(const Backoff& backoff, int failures, const HttpResult& result, double random);

}  // namespace nmprof::upload
