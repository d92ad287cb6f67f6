// The delivery queue's logic: order, the bound by bytes, which answers are retried
// and after how long (backoff with jitter, Retry-After), and what is given up; first
// with the time given by the test (DeliverySchedule), then on its thread with a fake
// server (DeliveryQueue): a flush that ends by its deadline whatever the server does.
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <thread>

#include "cli/upload/delivery_queue.h"
#include "cli/upload/retry_policy.h"

namespace nmprof::upload {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

HttpResult answer(long status, std::optional<double> retry_after = std::nullopt, std::string detail = "") {
  HttpResult r;
  r.kind = HttpResult::Kind::Response;
  r.status = status;
  r.retry_after = retry_after;
  r.detail = std::move(detail);
  return r;
}

HttpResult failure(HttpResult::Kind kind, std::string detail) {
  HttpResult r;
  r.kind = kind;
  r.detail = std::move(detail);
  return r;
}

Delivery delivery(const std::string& chunk, size_t bytes) {
  return {chunk, {"http://x/ingest", "t", "", std::string(bytes, 'x')}};
}

TEST(RetryPolicy, RetriesConnectionErrorsTimeoutsRateLimitsAndServerErrors) {
  EXPECT_EQ(outcome_of(answer(200)), Outcome::Delivered);
  EXPECT_EQ(outcome_of(answer(204)), Outcome::Delivered);
  for (long status : {408L, 429L, 500L, 502L, 503L, 504L})
    EXPECT_EQ(outcome_of(answer(status)), Outcome::Retry) << status;
  for (long status : {301L, 400L, 401L, 403L, 404L, 413L, 422L})
    EXPECT_EQ(outcome_of(answer(status)), Outcome::GiveUp) << status;
  EXPECT_EQ(outcome_of(failure(HttpResult::Kind::Unreachable, "refused")), Outcome::Retry);
  EXPECT_EQ(outcome_of(failure(HttpResult::Kind::Tls, "bad certificate")), Outcome::GiveUp);
  EXPECT_EQ(outcome_of(failure(HttpResult::Kind::Failed, "bad URL")), Outcome::GiveUp);
}

TEST(RetryPolicy, BackoffDoublesWithJitterUpToItsLongest) {
  Backoff backoff{Duration(1), Duration(60), Duration(3600)};
  HttpResult down = failure(HttpResult::Kind::Unreachable, "refused");
  for (int failures = 1; failures <= 10; failures++) {
    double full = std::min(60.0, std::exp2(failures - 1));
    EXPECT_DOUBLE_EQ(retry_delay(backoff, failures, down, 0.0).count(), full / 2) << failures;
    EXPECT_DOUBLE_EQ(retry_delay(backoff, failures, down, 0.999999).count(), full * (0.5 + 0.5 * 0.999999));
  }
  // Jitter spreads the retries of many clients: different draws, different delays.
  EXPECT_NE(retry_delay(backoff, 3, down, 0.1), retry_delay(backoff, 3, down, 0.7));
  EXPECT_DOUBLE_EQ(retry_delay(backoff, 1000, down, 0.0).count(), 30);  // no overflow far out
}

TEST(RetryPolicy, RetryAfterIsHonouredAsItIsAndCapped) {
  Backoff backoff{Duration(1), Duration(60), Duration(3600)};
  EXPECT_DOUBLE_EQ(retry_delay(backoff, 1, answer(429, 7.0), 0.0).count(), 7);
  EXPECT_DOUBLE_EQ(retry_delay(backoff, 9, answer(503, 2.0), 0.9).count(), 2);  // not the longer backoff
  EXPECT_DOUBLE_EQ(retry_delay(backoff, 1, answer(503, 1e9), 0.5).count(), 3600);
}

TEST(DeliverySchedule, DeliversInOrderAndRetriesTheOldestFirst) {
  DeliverySchedule schedule(1 << 20, Backoff{}, 1);
  auto t0 = Clock::time_point() + seconds(100);
  ASSERT_TRUE(schedule.add(delivery("chunk-0", 10), t0));
  ASSERT_TRUE(schedule.add(delivery("chunk-1", 10), t0));
  TimePoint next{};
  const Delivery* first = schedule.due(t0, &next);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->chunk, "chunk-0");

  Settled s = schedule.settle(answer(503, std::nullopt, "busy"), t0);
  EXPECT_EQ(s.outcome, Outcome::Retry);
  EXPECT_EQ(s.reason, "HTTP 503: busy");
  EXPECT_EQ(s.failures, 1);
  EXPECT_GE(s.delay, Duration(0.5));
  EXPECT_LE(s.delay, Duration(1.0));
  // Nothing is due until the backoff has passed, not even the next chunk: they go in order.
  EXPECT_EQ(schedule.due(t0 + milliseconds(400), &next), nullptr);
  EXPECT_EQ(next, t0 + std::chrono::duration_cast<Clock::duration>(s.delay));
  const Delivery* again = schedule.due(next, &next);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->chunk, "chunk-0");

  Settled second = schedule.settle(failure(HttpResult::Kind::Unreachable, "connection refused"), t0 + seconds(1));
  EXPECT_EQ(second.failures, 2);
  EXPECT_GE(second.delay, Duration(1.0));  // doubled
  EXPECT_LE(second.delay, Duration(2.0));
  EXPECT_EQ(schedule.settle(answer(200), t0 + seconds(3)).outcome, Outcome::Delivered);
  const Delivery* then = schedule.due(t0 + seconds(3), &next);
  ASSERT_NE(then, nullptr);
  EXPECT_EQ(then->chunk, "chunk-1");
  EXPECT_EQ(schedule.settle(answer(200), t0 + seconds(3)).outcome, Outcome::Delivered);
  EXPECT_TRUE(schedule.empty());
  EXPECT_EQ(schedule.bytes(), 0u);
}

TEST(DeliverySchedule, HonoursRetryAfter) {
  DeliverySchedule schedule(1 << 20, Backoff{}, 1);
  auto t0 = Clock::time_point() + seconds(100);
  schedule.add(delivery("chunk", 10), t0);
  TimePoint next{};
  schedule.due(t0, &next);
  Settled s = schedule.settle(answer(429, 5.0, "slow down"), t0);
  EXPECT_EQ(s.delay, Duration(5));
  EXPECT_EQ(schedule.due(t0 + milliseconds(4999), &next), nullptr);
  EXPECT_NE(schedule.due(t0 + seconds(5), &next), nullptr);
}

TEST(DeliverySchedule, GivesUpOnARefusalAtOnce) {
  DeliverySchedule schedule(1 << 20, Backoff{}, 1);
  auto t0 = Clock::time_point();
  schedule.add(delivery("chunk-0", 10), t0);
  schedule.add(delivery("chunk-1", 10), t0);
  TimePoint next{};
  schedule.due(t0, &next);
  Settled s = schedule.settle(answer(400, std::nullopt, "invalid label"), t0);
  EXPECT_EQ(s.outcome, Outcome::GiveUp);
  EXPECT_EQ(s.reason, "HTTP 400: invalid label");
  const Delivery* next_one = schedule.due(t0, &next);  // the next goes at once
  ASSERT_NE(next_one, nullptr);
  EXPECT_EQ(next_one->chunk, "chunk-1");
}

TEST(DeliverySchedule, IsBoundedByBytesButTakesOneDeliveryOfAnySize) {
  DeliverySchedule schedule(100, Backoff{}, 1);
  auto t0 = Clock::time_point();
  EXPECT_TRUE(schedule.add(delivery("big", 500), t0));  // alone: taken
  EXPECT_FALSE(schedule.add(delivery("more", 1), t0));
  TimePoint next{};
  schedule.due(t0, &next);
  schedule.settle(answer(200), t0);
  EXPECT_TRUE(schedule.add(delivery("a", 60), t0));
  EXPECT_TRUE(schedule.add(delivery("b", 40), t0));
  EXPECT_FALSE(schedule.add(delivery("c", 1), t0));
  EXPECT_EQ(schedule.bytes(), 100u);
  auto left = schedule.abandon(t0);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].chunk, "a");
  EXPECT_EQ(left[0].last_failure, "");  // never tried
  EXPECT_TRUE(schedule.empty());
}

// A server scripted by the test: each post takes the next answer; with none left it
// never answers (until aborted).
class FakeServer : public HttpTransport {
 public:
  explicit FakeServer(std::deque<HttpResult> answers) : answers_(std::move(answers)) {}

  HttpResult post(const HttpRequest& request, const std::atomic<bool>& abort) override {
    std::unique_lock lock(mutex_);
    bodies_.push_back(request.body);
    if (answers_.empty()) {
      lock.unlock();
      while (!abort) std::this_thread::sleep_for(milliseconds(1));
      return failure(HttpResult::Kind::Aborted, "abandoned");
    }
    HttpResult next = answers_.front();
    answers_.pop_front();
    return next;
  }

  std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<HttpResult> answers_;
  std::vector<std::string> bodies_;
};

Backoff quick() { return Backoff{Duration(0.001), Duration(0.004), Duration(0.05)}; }

TEST(DeliveryQueue, RetriesUntilTakenThenSaysSo) {
  auto server = std::make_unique<FakeServer>(std::deque<HttpResult>{
      failure(HttpResult::Kind::Unreachable, "connection refused"), answer(500), answer(429, 0.01), answer(200)});
  FakeServer* fake = server.get();
  std::vector<Settled> settled;
  std::mutex m;
  DeliveryQueue queue(std::move(server), 1 << 20, quick(), [&](const Settled& s) {
    std::lock_guard lock(m);
    settled.push_back(s);
  });
  ASSERT_TRUE(queue.push(delivery("chunk", 3)));
  auto left = queue.finish(Clock::now() + seconds(10), [] { return false; });
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(queue.delivered(), 1);
  EXPECT_EQ(fake->bodies().size(), 4u);  // the same body each time
  ASSERT_EQ(settled.size(), 4u);
  EXPECT_EQ(settled[0].reason, "connection refused");
  EXPECT_EQ(settled[3].outcome, Outcome::Delivered);
}

TEST(DeliveryQueue, ARefusalIsNotRetried) {
  auto server = std::make_unique<FakeServer>(std::deque<HttpResult>{answer(400, std::nullopt, "bad"), answer(200)});
  FakeServer* fake = server.get();
  int refusals = 0;
  DeliveryQueue queue(std::move(server), 1 << 20, quick(),
                      [&](const Settled& s) { refusals += s.outcome == Outcome::GiveUp; });
  queue.push(delivery("refused", 3));
  queue.push(delivery("next", 4));
  auto left = queue.finish(Clock::now() + seconds(10), [] { return false; });
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(refusals, 1);
  EXPECT_EQ(queue.delivered(), 1);
  EXPECT_EQ(fake->bodies(), (std::vector<std::string>{"xxx", "xxxx"}));
}

TEST(DeliveryQueue, AServerThatNeverAnswersIsLeftAtTheDeadline) {
  auto server = std::make_unique<FakeServer>(std::deque<HttpResult>{});
  DeliveryQueue queue(std::move(server), 1 << 20, quick(), [](const Settled&) {});
  queue.push(delivery("hung", 3));
  queue.push(delivery("behind", 3));
  auto start = Clock::now();
  auto left = queue.finish(start + milliseconds(300), [] { return false; });
  auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(1500));
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].chunk, "hung");
  EXPECT_EQ(left[1].chunk, "behind");
  EXPECT_EQ(queue.delivered(), 0);
}

TEST(DeliveryQueue, ARetryDueAfterTheDeadlineEndsTheFlushAtOnce) {
  auto server = std::make_unique<FakeServer>(std::deque<HttpResult>{answer(429, 3600.0, "later")});
  DeliveryQueue queue(std::move(server), 1 << 20, Backoff{Duration(1), Duration(60), Duration(3600)},
                      [](const Settled&) {});
  queue.push(delivery("chunk", 3));
  auto start = Clock::now();
  auto left = queue.finish(start + seconds(20), [] { return false; });
  EXPECT_LT(Clock::now() - start, seconds(2));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].last_failure, "HTTP 429: later");
  ASSERT_TRUE(left[0].retry_after);  // what the message names
  EXPECT_GT(*left[0].retry_after, Duration(3500));
}

TEST(DeliveryQueue, AnInterruptionEndsTheFlush) {
  auto server = std::make_unique<FakeServer>(std::deque<HttpResult>{});
  DeliveryQueue queue(std::move(server), 1 << 20, quick(), [](const Settled&) {});
  queue.push(delivery("chunk", 3));
  auto start = Clock::now();
  auto left = queue.finish(start + seconds(20), [start] { return Clock::now() - start > milliseconds(100); });
  EXPECT_LT(Clock::now() - start, seconds(2));
  EXPECT_EQ(left.size(), 1u);
}

}  // namespace
}  // namespace nmprof::upload
