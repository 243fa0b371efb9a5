// Clock: the time source injected into every component that schedules (politeness, retries,
// recrawl), so tests use FakeClock and never sleep.
//
// Thread-safety: SystemClock is stateless. FakeClock is safe to read and advance from any
// thread (atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace harvest {

// Monotonic time for scheduling and wall time for records (WARC-Date, logs).
class Clock {
 public:
  using Duration = std::chrono::microseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;
  virtual ~Clock() = default;
  // Monotonic now.
  virtual TimePoint Now() const = 0;
  // Microseconds since the Unix epoch.
  virtual int64_t WallMicros() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
  }
  int64_t WallMicros() const override {
    return std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // The process-wide default (stateless, so sharing it is safe).
  static SystemClock* Default() {
    static SystemClock clock;
    return &clock;
  }
};

// A clock that only moves when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_micros = 1'700'000'000'000'000) : micros_(start_micros) {}
  TimePoint Now() const override { return TimePoint(Duration(micros_.load())); }
  int64_t WallMicros() const override { return micros_.load(); }
  void Advance(Duration d) { micros_ += d.count(); }
  void SetMicros(int64_t m) { micros_ = m; }

 private:
  std::atomic<int64_t> micros_;
};

}  // namespace harvest
