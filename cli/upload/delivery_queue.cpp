#include "cli/upload/delivery_queue.h"

#include <pthread.h>
#include <signal.h>

#include <random>

namespace nmprof::upload {

std::string failure_text(const HttpResult& result) {
  switch (result.kind) {
    case HttpResult::Kind::Response:
      return "HTTP " + std::to_string(result.status) + (result.detail.empty() ? "" : ": " + result.detail);
    case HttpResult::Kind::Tls: return "TLS: " + result.detail;
    default: return result.detail;
  }
}

bool DeliverySchedule::add(Delivery delivery, TimePoint now) {
  size_t size = delivery.request.body.size();
  if (!pending_.empty() && bytes_ + size > max_bytes_) return false;
  bytes_ += size;
  pending_.push_back({std::move(delivery), 0, now, {}});
  return true;
}

const Delivery* DeliverySchedule::due(TimePoint now, TimePoint* next) const {
  if (pending_.empty()) return nullptr;
  if (pending_.front().due <= now) return &pending_.front().delivery;
  *next = pending_.front().due;
  return nullptr;
}

Settled DeliverySchedule::settle(const HttpResult& result, TimePoint now) {
  Pending& front = pending_.front();
  Settled settled;
  settled.outcome = outcome_of(result);
  settled.chunk = front.delivery.chunk;
  if (settled.outcome != Outcome::Delivered) {
    front.failures++;
    settled.reason = front.last_failure = failure_text(result);
  }
  settled.failures = front.failures;
  if (settled.outcome == Outcome::Retry) {
    settled.delay = retry_delay(backoff_, front.failures, result, std::uniform_real_distribution<>(0, 1)(random_));
    front.due = now + std::chrono::duration_cast<Clock::duration>(settled.delay);
    front.retry_after = result.retry_after.has_value();
    return settled;
  }
  bytes_ -= front.delivery.request.body.size();
  pending_.pop_front();
  return settled;
}

std::vector<Undelivered> DeliverySchedule::abandon(TimePoint now) {
  std::vector<Undelivered> left;
  for (const Pending& p : pending_) {
    left.push_back({p.delivery.chunk, p.last_failure, std::nullopt});
    if (p.retry_after && p.due > now) left.back().retry_after = std::chrono::duration_cast<Duration>(p.due - now);
  }
  pending_.clear();
  bytes_ = 0;
  return left;
}

DeliveryQueue::DeliveryQueue(std::unique_ptr<HttpTransport> transport, size_t max_bytes, Backoff backoff,
                             std::function<void(const Settled&)> on_settled)
    : transport_(std::move(transport)),
      on_settled_(std::move(on_settled)),
      schedule_(max_bytes, backoff, std::random_device()()) {}

DeliveryQueue::~DeliveryQueue() { stop(); }

bool DeliveryQueue::push(Delivery delivery) {
  std::lock_guard lock(mutex_);
  if (stopping_ || !schedule_.add(std::move(delivery), Clock::now())) return false;
  if (!thread_.joinable()) {
    // Signals go to nmprof's main thread, which decides what they mean.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  changed_.notify_all();
  return true;
}

void DeliveryQueue::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    TimePoint next{};
    const Delivery* delivery = schedule_.due(Clock::now(), &next);
    if (!delivery) {
      if (schedule_.empty())
        changed_.wait(lock);
      else
        changed_.wait_until(lock, next);
      continue;
    }
    // The delivery stays where it is meanwhile: only this thread takes it out.
    in_flight_ = true;
    lock.unlock();
    HttpResult result = transport_->post(delivery->request, abort_);
    lock.lock();
    in_flight_ = false;
    if (result.kind == HttpResult::Kind::Aborted) break;
    Settled settled = schedule_.settle(result, Clock::now());
    if (settled.outcome == Outcome::Delivered) delivered_++;
    changed_.notify_all();
    lock.unlock();
    on_settled_(settled);
    lock.lock();
  }
}

std::vector<Undelivered> DeliveryQueue::finish(TimePoint deadline, const std::function<bool()>& interrupted) {
  constexpr auto kPoll = std::chrono::milliseconds(50);
  std::unique_lock lock(mutex_);
  for (;;) {
    TimePoint now = Clock::now(), next{};
    if (schedule_.empty() || now >= deadline || interrupted()) break;
    if (!in_flight_ && !schedule_.due(now, &next) && next > deadline) break;  // nothing more before the deadline
    changed_.wait_until(lock, std::min(deadline, now + kPoll));
  }
  lock.unlock();
  stop();
  return schedule_.abandon(Clock::now());
}

void DeliveryQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abort_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

int DeliveryQueue::delivered() const {
  std::lock_guard lock(mutex_);
  return delivered_;
}

}  // namespace nmprof::upload
