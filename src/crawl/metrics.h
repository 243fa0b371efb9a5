// The crawl's figures for the admin API (docs/operating.md "Metrics"): MetricsSnapshot,
// rendered as Prometheus text by RenderMetrics (metrics_text.cc), and the small counters the
// I/O thread keeps for /status and /hosts (a ring of per-second counts, per-host activity).
//
// Thread-safety: none; the I/O thread owns the live ones and hands out copies.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "admin/backend.h"

namespace harvest::crawl {

struct MetricsSnapshot {
  // Page fetches with a response by status class ("2xx".."5xx", "other").
  std::map<std::string, uint64_t> fetches_by_class;
  uint64_t robots_fetches = 0;
  uint64_t bytes_downloaded = 0;  // response bodies as received
  uint64_t warc_bytes = 0;        // written to WARC files
  uint64_t pages_stored = 0;      // WARC response + revisit records
  // Fetch latency (request start to response end), seconds: bucket upper bounds and
  // non-cumulative counts per bound plus one last for +Inf.
  std::vector<double> latency_bounds;
  std::vector<uint64_t> latency_counts;
  double latency_sum_s = 0;
  uint64_t queue_depth = 0;
  // Hosts with work by state: active, ready, waiting, blocked.
  std::map<std::string, uint64_t> hosts_by_state;
  double politeness_wait_s = 0;  // host delays charged after requests, summed
  // robots.txt fetch results by outcome (rules, redirect, retry, cached, unavailable,
  // unreachable).
  std::map<std::string, uint64_t> robots_outcomes;
  uint64_t dedup_url_seen = 0;  // links refused because the URL was already admitted
  uint64_t dedup_exact = 0;     // revisit records (payload already stored)
  uint64_t dedup_near = 0;      // near-duplicates (SimHash)
  uint64_t retries = 0;
  // Failed fetches by kind: transport errors by fetch outcome name (timeout, connect, ...)
  // and "http_5xx", "http_429".
  std::map<std::string, uint64_t> errors_by_kind;
  uint64_t dns_lookups = 0;
  uint64_t dns_failures = 0;
  uint64_t admitted = 0;
  admin::BudgetStatus budgets;
  double uptime_s = 0;
  bool paused = false;
};

// Prometheus text exposition format 0.0.4, via admin::PromWriter. Names harvest_*, counters
// end in _total, the latency histogram is harvest_fetch_duration_seconds.
std::string RenderMetrics(const MetricsSnapshot& m);

// The latency histogram's bucket upper bounds (seconds).
const std::vector<double>& LatencyBounds();

// Counts per second over the last minute (pages_per_sec, error rate), keyed by whole
// seconds of the crawl's clock.
class SecondRing {
 public:
  static constexpr int kSeconds = 60;
  void Add(int64_t second, uint64_t pages, uint64_t errors);
  // Sums over the kSeconds seconds ending at `now_second`.
  void Totals(int64_t now_second, uint64_t* pages, uint64_t* errors) const;

 private:
  struct Slot {
    int64_t second = -1;
    uint64_t pages = 0, errors = 0;
  };
  std::array<Slot, kSeconds> slots_{};
};

// What a resident host did in this run (GET /hosts/{host}, busiest hosts). Allocated on a
// host's first completed request; dropped with the host when it is evicted from RAM.
struct HostActivity {
  static constexpr size_t kRecentErrors = 5;
  uint64_t pages = 0;  // page requests completed (response or not)
  uint64_t errors = 0;
  std::array<uint64_t, 5> by_class{};     // 1xx..5xx responses
  std::deque<std::string> recent_errors;  // newest last, at most kRecentErrors
  void NoteError(std::string what) {
    ++errors;
    recent_errors.push_back(std::move(what));
    if (recent_errors.size() > kRecentErrors) recent_errors.pop_front();
  }
};

}  // namespace harvest::crawl
