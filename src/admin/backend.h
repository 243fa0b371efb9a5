// The admin API's view of a crawl (docs/architecture.md §4, "admin thread").
//
// admin::Server (admin.h) parses and validates HTTP requests on its own thread and calls a
// Backend. The crawl's Backend (crawl/admin_backend.cc) never touches the frontier from the
// calling thread: it posts each call to the crawl's I/O thread through a queue and waits for
// the answer. `harvest serve` uses a read-only Backend over a finished crawl directory.
//
// Every method is called on the admin thread, one call at a time per request; a Backend must
// be safe to call from several admin threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace harvest::admin {

// POST /seeds {"urls": [...], "priority": N}
struct SeedRequest {
  std::vector<std::string> urls;
  std::optional<int> priority;  // a priority class; absent: the crawl's seed priority
};
struct SeedRejection {
  std::string url;
  std::string reason;  // e.g. "invalid URL: no scheme", "already seen", "out of scope"
};
struct SeedResult {
  uint64_t queued = 0;
  std::vector<SeedRejection> rejected;
};

// GET /status
struct HostCounts {
  uint64_t active = 0;   // a request in flight
  uint64_t ready = 0;    // queued URLs, delay passed, waiting for a fetch slot
  uint64_t waiting = 0;  // queued URLs, waiting out the host's delay (or its robots.txt)
  uint64_t blocked = 0;  // blocked by the operator or an open circuit breaker
};
// A host among the busiest (StatusSnapshot::busiest_hosts): page requests completed in
// this run, URLs queued, failed requests.
struct BusyHost {
  std::string host;
  uint64_t pages = 0;
  uint64_t queued = 0;
  uint64_t errors = 0;
};
// A worker's share of a crawl shared over a Redis Cluster (docs/distributed.md).
struct SharedShare {
  std::string worker;         // --worker-id
  int partitions_held = 0;    // partition leases this worker holds now
  int partitions = 0;         // partitions of the crawl
  uint64_t taken = 0;         // URLs this worker took from its partitions
  uint64_t done = 0;          // and finished
  uint64_t admitted_new = 0;  // URLs it admitted that no worker had admitted before
};

// The metadata writer's state (docs/metadata.md "Durability"), with --metadata.
struct MetadataStatus {
  bool database_up = false;   // connected to PostgreSQL
  double outage_seconds = 0;  // since the current outage began (0: none)
  uint64_t rows_written = 0;  // new rows committed
  uint64_t failures = 0;      // failed connections or transactions (each retried)
  uint64_t cursor = 0;        // highest page record id committed
  std::string last_error;     // the last database error ("" while none)
};

// Budgets (docs/admission.md "Budgets"): hosts over their discovery ratio or daily fetch
// quota, whose new URLs wait on disk (deferred) to be admitted.
struct BudgetStatus {
  uint64_t deferred = 0;          // URLs deferred on disk now
  uint64_t hosts_throttled = 0;   // hosts with deferred URLs now
  uint64_t hosts_over_quota = 0;  // hosts that reached their daily fetch quota today
  uint64_t deferred_total = 0;    // URLs deferred in this run
  uint64_t released_total = 0;    // deferred URLs admitted in this run
  uint64_t backlog_refused = 0;   // URLs refused in this run: their host's backlog was full
};

struct StatusSnapshot {
  double pages_per_sec = 0;  // over the last minute
  uint64_t queue_depth = 0;  // URLs queued
  HostCounts hosts;
  BudgetStatus budgets;
  double error_rate_percent = 0;  // failed fetches / fetches, over the last minute
  uint64_t bytes_stored = 0;      // WARC bytes written
  uint64_t pages_stored = 0;      // WARC response + revisit records
  double uptime_s = 0;
  std::string state;  // "running", "paused", "draining", "complete"
  // Optional (the dashboard shows it when not empty): the top 10 resident hosts by page
  // requests completed in this run, most first.
  std::vector<BusyHost> busiest_hosts;
  // Set for a worker of a shared crawl: its share.
  std::optional<SharedShare> shared;
  // Set when the crawl writes its metadata to PostgreSQL (--metadata).
  std::optional<MetadataStatus> metadata;
};

// POST /hosts/{host}/policy: fields left out keep their current value.
struct HostPolicy {
  std::optional<int64_t> crawl_delay_ms;
  std::optional<int> max_concurrent;
  std::optional<double> weight;
};

// GET /pages?host=&status=&since=&limit=&cursor=
struct PageQuery {
  std::optional<std::string> host;
  std::optional<int> status;
  std::optional<int64_t> since_unix_ms;  // fetched at or after
  int limit = 100;                       // 1..1000
  std::optional<std::string> cursor;     // opaque, from PageList::next_cursor
};
struct PageRecord {
  uint64_t id = 0;
  std::string url;
  int status = 0;
  int64_t fetched_at_unix_ms = 0;
  std::string mime;
  std::string title;
  std::string digest;  // "sha256:<base32>"
  std::string warc_file;
  uint64_t warc_offset = 0;
  uint64_t warc_length = 0;
  // The crawler's outcome of the fetch and why (docs/metadata.md): an attempt (a request
  // that left no WARC record: "retried", or given up without a response) has warc_file "".
  std::string outcome;
  std::string reason;
};
struct PageList {
  std::vector<PageRecord> pages;
  std::optional<std::string> next_cursor;
};
struct PageContent {
  std::string content_type;
  std::string body;  // the stored payload (decoded of transfer and content encoding)
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Seeds are in the crawl state before this returns (durable).
  virtual Result<SeedResult> InjectSeeds(const SeedRequest& request) = 0;
  virtual StatusSnapshot GetStatus() = 0;
  // InvalidArgument naming the rule when the policy is less polite than robots.txt and the
  // defaults allow; NotFound for an unknown host. Persisted.
  virtual Status SetPolicy(std::string_view host, const HostPolicy& policy) = 0;
  // Policy, robots summary, queue length, counters, recent errors. NotFound if unknown.
  virtual Result<nlohmann::json> GetHost(std::string_view host) = 0;
  virtual Status SetBlocked(std::string_view host, bool blocked) = 0;
  virtual Result<PageList> ListPages(const PageQuery& query) = 0;
  virtual Result<PageRecord> GetPage(uint64_t id) = 0;
  virtual Result<PageContent> GetPageContent(uint64_t id) = 0;
  virtual Status Pause() = 0;
  virtual Status Resume() = 0;
  // The Prometheus text exposition format (version 0.0.4), rendered with PromWriter.
  virtual std::string MetricsText() = 0;
  // `harvest serve`: mutating endpoints answer 409 "read-only: no crawl is running".
  virtual bool read_only() const = 0;
};

}  // namespace harvest::admin
