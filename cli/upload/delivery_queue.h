// The deliveries to one destination, in the order they were made, sent by a thread
// of nmprof's own (never by the agent, never on the program's path): a queue bounded
// by bytes, so that a server that is down costs nmprof a bounded amount of memory;
// each delivery tried until it is taken or refused (retry_policy.h); and at exit a
// flush that ends by a deadline, however the server behaves.
//
// DeliverySchedule is the queue's logic without a thread or a clock of its own
// (its tests give it the time); DeliveryQueue runs it on a thread.
#pragma once

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli/upload/http_client.h"
#include "cli/upload/retry_policy.h"

namespace nmprof::upload {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct Delivery {
  std::string chunk;  // the file the request was made from, for messages
  HttpRequest request;
};

// What one attempt came to.
struct Settled {
  Outcome outcome = Outcome::Delivered;
  std::string chunk;
  int failures = 0;    // of this delivery, this attempt included
  Duration delay{0};   // Retry: until the next attempt
  std::string reason;  // Retry, GiveUp: why ("HTTP 503: ...", "connection refused")
};

struct Undelivered {
  std::string chunk;
  std::string last_failure;  // "" when no attempt was answered
  // The server's Retry-After when the delivery was waiting for it, not being sent.
  std::optional<Duration> retry_after;
};

// "HTTP 400: invalid label", "TLS: certificate has expired", curl's words.
std::string failure_text(const HttpResult& result);

class DeliverySchedule {
 public:
  DeliverySchedule(size_t max_bytes, Backoff backoff, uint64_t seed)
      : max_bytes_(max_bytes), backoff_(backoff), random_(seed) {}

  // Queues a delivery; false when its body would take the queue past max_bytes (a
  // delivery alone is always taken).
  bool add(Delivery delivery, TimePoint now);
  bool empty() const { return pending_.empty(); }
  size_t bytes() const { return bytes_; }
  // The oldest delivery, when it is due at `now` (they go in order); else nullptr,
  // with *next set to when it is due (unless the queue is empty).
  const Delivery* due(TimePoint now, TimePoint* next) const;
  // What the attempt of the delivery due() gave came to: delivered and refused ones
  // leave the queue, others are due again after the backoff.
  Settled settle(const HttpResult& result, TimePoint now);
  // Empties the queue at `now`: what is left was not delivered.
  std::vector<Undelivered> abandon(TimePoint now);

 private:
  struct Pending {
    Delivery delivery;
    int failures = 0;
    TimePoint due;
    std::string last_failure;
    bool retry_after = false;  // `due` is what the last answer's Retry-After said
  };
  std::deque<Pending> pending_;
  size_t bytes_ = 0;
  size_t max_bytes_;
  Backoff backoff_;
  std::mt19937_64 random_;
};

class DeliveryQueue {
 public:
  // `on_settled` is called on the queue's thread after every attempt, for messages.
  DeliveryQueue(std::unique_ptr<HttpTransport> transport, size_t max_bytes, Backoff backoff,
                std::function<void(const Settled&)> on_settled);
  ~DeliveryQueue();  // abandons what is left
  DeliveryQueue(const DeliveryQueue&) = delete;
  DeliveryQueue& operator=(const DeliveryQueue&) = delete;

  // Queues a delivery (false when the queue is full) and starts sending.
  bool push(Delivery delivery);
  // Waits until everything was settled, until `deadline`, until the next attempt is
  // due after it, or until `interrupted()` (polled); then abandons the attempt in
  // flight and what waits, and returns what they were (those the server refused were
  // settled, and are not among them).
  std::vector<Undelivered> finish(TimePoint deadline, const std::function<bool()>& interrupted);
  int delivered() const;

 private:
  void run();
  void stop();

  std::unique_ptr<HttpTransport> transport_;
  std::function<void(const Settled&)> on_settled_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  DeliverySchedule schedule_;
  bool in_flight_ = false;
  bool stopping_ = false;
  int delivered_ = 0;
  std::atomic<bool> abort_{false};
  std::thread thread_;
};

}  // namespace nmprof::upload
