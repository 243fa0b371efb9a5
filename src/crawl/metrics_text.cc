// MetricsSnapshot as Prometheus text (docs/operating.md "Metrics"), and the small counters
// of metrics.h.
#include <map>

#include "admin/prometheus.h"

#include "crawl/metrics.h"

namespace harvest::crawl {
namespace {

double D(uint64_t v) { return static_cast<double>(v); }

}  // namespace

const std::vector<double>& LatencyBounds() {
  static const std::vector<double> kBounds = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return kBounds;
}

std::string RenderMetrics(const MetricsSnapshot& m) {
  admin::PromWriter w;
  for (const auto& [cls, n] : m.fetches_by_class) {
    w.Counter("harvest_fetches_total", "Page fetches with an HTTP response, by status class.", D(n),
              {{"class", cls}});
  }
  w.Counter("harvest_robots_fetches_total", "robots.txt requests completed.", D(m.robots_fetches));
  w.Counter("harvest_downloaded_bytes_total", "Response body bytes received.",
            D(m.bytes_downloaded));
  w.Counter("harvest_warc_bytes_total", "Bytes written to WARC files.", D(m.warc_bytes));
  w.Counter("harvest_pages_stored_total", "WARC response and revisit records written.",
            D(m.pages_stored));
  if (!m.latency_counts.empty()) {
    w.Histogram("harvest_fetch_duration_seconds",
                "Time from request start to the end of the response.", m.latency_bounds,
                m.latency_counts, m.latency_sum_s);
  }
  w.Gauge("harvest_queue_depth", "URLs queued in the frontier.", D(m.queue_depth));
  w.Gauge("harvest_deferred_urls", "URLs of hosts over their budget waiting on disk.",
          D(m.budgets.deferred));
  w.Gauge("harvest_hosts_throttled", "Hosts over their budget with URLs deferred.",
          D(m.budgets.hosts_throttled));
  w.Gauge("harvest_hosts_over_quota", "Hosts that reached their daily fetch quota today.",
          D(m.budgets.hosts_over_quota));
  w.Counter("harvest_deferred_total", "URLs deferred: their host was over its budget.",
            D(m.budgets.deferred_total));
  w.Counter("harvest_released_total", "Deferred URLs admitted as their host's budget allowed.",
            D(m.budgets.released_total));
  w.Counter("harvest_backlog_refused_total",
            "URLs refused because their host's backlog of deferred URLs was full.",
            D(m.budgets.backlog_refused));
  for (const auto& [state, n] : m.hosts_by_state) {
    w.Gauge("harvest_hosts", "Hosts with work, by state.", D(n), {{"state", state}});
  }
  w.Counter("harvest_politeness_wait_seconds_total",
            "Per-host delays charged after requests (politeness), summed.", m.politeness_wait_s);
  for (const auto& [outcome, n] : m.robots_outcomes) {
    w.Counter("harvest_robots_outcomes_total", "robots.txt fetch results, by outcome.", D(n),
              {{"outcome", outcome}});
  }
  w.Counter("harvest_dedup_hits_total", "Duplicates found, by kind.", D(m.dedup_url_seen),
            {{"kind", "url"}});
  w.Counter("harvest_dedup_hits_total", "Duplicates found, by kind.", D(m.dedup_exact),
            {{"kind", "exact"}});
  w.Counter("harvest_dedup_hits_total", "Duplicates found, by kind.", D(m.dedup_near),
            {{"kind", "near"}});
  w.Counter("harvest_retries_total", "Fetches scheduled for a retry.", D(m.retries));
  // Every known kind, zeros included, so the family is there before the first error.
  std::map<std::string, uint64_t> errors = m.errors_by_kind;
  for (const char* kind :
       {"timeout", "connect_error", "dns_error", "tls_error", "protocol_error",
        "too_many_redirects", "aborted", "other_error", "http_429", "http_5xx"}) {
    errors.try_emplace(kind, 0);
  }
  for (const auto& [kind, n] : errors) {
    w.Counter("harvest_fetch_errors_total", "Failed page fetches, by kind.", D(n),
              {{"kind", kind}});
  }
  w.Counter("harvest_dns_lookups_total", "Host names looked up (cache misses).", D(m.dns_lookups));
  w.Counter("harvest_dns_failures_total", "Requests not made because the name did not resolve.",
            D(m.dns_failures));
  w.Counter("harvest_admitted_total", "URLs admitted into the frontier.", D(m.admitted));
  w.Gauge("harvest_uptime_seconds", "Seconds since the crawl started.", m.uptime_s);
  w.Gauge("harvest_paused", "1 while the operator paused the crawl.", m.paused ? 1 : 0);
  return w.Take();
}

void SecondRing::Add(int64_t second, uint64_t pages, uint64_t errors) {
  Slot& s = slots_[static_cast<size_t>(((second % kSeconds) + kSeconds) % kSeconds)];
  if (s.second != second) s = Slot{.second = second};
  s.pages += pages;
  s.errors += errors;
}

void SecondRing::Totals(int64_t now_second, uint64_t* pages, uint64_t* errors) const {
  *pages = *errors = 0;
  for (const Slot& s : slots_) {
    if (s.second >= 0 && s.second <= now_second && now_second - s.second < kSeconds) {
      *pages += s.pages;
      *errors += s.errors;
    }
  }
}

}  // namespace harvest::crawl
