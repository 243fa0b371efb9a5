// RunReport: the run's figures as other threads and the terminal see them — the time the run
// started, the copy of CrawlStats other threads read (Crawler::stats(), published at most
// once a second by the loop and at the end), and the live progress line on stderr (when it is
// a terminal and options.progress is set).
//
// Thread-safety: published() from any thread; everything else on the I/O thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/clock.h"
#include "base/mutex.h"
#include "crawl/crawl.h"

namespace harvest::crawl {

class RunReport {
 public:
  // What the progress line shows beyond CrawlStats.
  struct Line {
    size_t queued = 0;
    size_t hosts = 0;
    size_t hosts_ready = 0;
    size_t in_flight = 0;
  };

  RunReport(Clock* clock, bool progress_line) : clock_(clock), progress_line_(progress_line) {}
  RunReport(const RunReport&) = delete;
  RunReport& operator=(const RunReport&) = delete;

  void Start(Clock::TimePoint start);
  Clock::TimePoint started() const { return started_; }
  // A second has passed since the last Publish (or `final_line`).
  bool Due(bool final_line) const;
  // Publishes `stats` for other threads and draws the progress line (ends it, `final_line`).
  void Publish(const CrawlStats& stats, const Line& line, bool final_line) EXCLUDES(mu_);
  CrawlStats published() const EXCLUDES(mu_);

 private:
  Clock* const clock_;
  const bool progress_line_;
  Clock::TimePoint started_{};
  Clock::TimePoint last_{};  // the last Publish
  uint64_t last_pages_ = 0;
  bool shown_ = false;  // a progress line is on the terminal
  mutable Mutex mu_;
  CrawlStats published_ GUARDED_BY(mu_);
};

}  // namespace harvest::crawl
