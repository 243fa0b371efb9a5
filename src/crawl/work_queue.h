// A bounded multi-producer multi-consumer queue for the crawl's threads (docs/architecture.md §4):
// Push blocks while the queue is full (back-pressure, never drops); Pop blocks until an item
// arrives or the queue is closed and empty.
//
// Thread-safety: all methods are safe from any thread.
#pragma once

#include <chrono>
#include <deque>
#include <optional>

#include "base/mutex.h"

namespace harvest::crawl {

template <typename T>
class WorkQueue {
 public:
  explicit WorkQueue(size_t capacity) : capacity_(capacity) {}

  // Blocks while full. Returns false (dropping nothing: the item is not taken) once closed.
  // A blocked producer is woken once the queue is down to half its capacity, not at every
  // pop: a producer faster than its consumer then sleeps once per half queue, not per item
  // (a futex wake and two context switches each).
  bool Push(T item) {
    MutexLock lock(&mu_);
    if (!closed_ && items_.size() >= capacity_) {
      ++blocked_producers_;
      while (!closed_ && items_.size() >= capacity_) not_full_.Wait(&mu_);
      --blocked_producers_;
    }
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.Signal();
    return true;
  }

  // Never blocks: the capacity is ignored. For a producer that must not wait (the I/O
  // thread), whose items are few and bounded elsewhere. False once closed.
  bool PushNoWait(T item) {
    MutexLock lock(&mu_);
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.Signal();
    return true;
  }

  // Blocks until an item is available; nullopt once closed and drained.
  std::optional<T> Pop() {
    MutexLock lock(&mu_);
    while (!closed_ && items_.empty()) not_empty_.Wait(&mu_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    WakeProducers();
    return item;
  }

  // Waits at most `timeout` for an item.
  template <typename Rep, typename Period>
  std::optional<T> PopFor(std::chrono::duration<Rep, Period> timeout) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_ && items_.empty()) {
      if (!not_empty_.WaitUntil(&mu_, deadline)) break;
    }
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    WakeProducers();
    return item;
  }

  // Producers are refused from now on; consumers drain what is left.
  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
    not_empty_.SignalAll();
    not_full_.SignalAll();
  }

  // True once Close() was called and every item was popped.
  bool ClosedAndEmpty() const {
    MutexLock lock(&mu_);
    return closed_ && items_.empty();
  }

  size_t size() const {
    MutexLock lock(&mu_);
    return items_.size();
  }

 private:
  void WakeProducers() REQUIRES(mu_) {
    if (blocked_producers_ > 0 && items_.size() <= capacity_ / 2) not_full_.SignalAll();
  }

  const size_t capacity_;
  mutable Mutex mu_;
  CondVar not_empty_, not_full_;
  std::deque<T> items_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  size_t blocked_producers_ GUARDED_BY(mu_) = 0;  // in Push, waiting for room
};

}  // namespace harvest::crawl
