// FetchCompletions: what a completed request decides, on the I/O thread (docs/architecture.md
// §2 [fetch] → [process]) — the robots.txt step (rules, Crawl-delay, Sitemap lines, retry,
// giving the host up), the page's completion in the frontier (done, retry with its backoff,
// give up), the politeness record, the request's figures (per host, latency, errors), and the
// hand-off of responses to the process pool, or of an attempt without a response to the WARC
// sink's attempt records.
//
// Thread-safety: event-loop-only; every method asserts it runs on the crawl's I/O thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "crawl/crawl.h"
#include "crawl/host_table.h"
#include "crawl/metrics.h"
#include "crawl/outcome_log.h"
#include "crawl/robots_gate.h"
#include "crawl/warc_sink.h"
#include "fetch/fetch.h"
#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::crawl {

class Admitter;
class PagePipeline;
class Recrawler;

// A request the fetcher is working on (RequestIssuer starts it, FetchCompletions ends it).
struct InFlight {
  frontier::Lease lease;
  bool robots = false;
  // A recrawl: the URL's seen record before this fetch (validators, digest, interval).
  std::optional<state::SeenRecord> previous;
  bool conditional = false;  // sent If-None-Match / If-Modified-Since
  bool no_request = false;   // failed before a request was made (the name did not resolve)
};

class FetchCompletions {
 public:
  // What the completions counted in this run (merged into CrawlStats).
  struct Counters {
    uint64_t fetches = 0;
    uint64_t robots_fetches = 0;
    uint64_t pages = 0;
    uint64_t http_2xx = 0, http_3xx = 0, http_4xx = 0, http_5xx = 0;
    uint64_t fetch_errors = 0;
    uint64_t retries = 0;
    uint64_t gave_up = 0;
    uint64_t truncated = 0;
    uint64_t bytes_downloaded = 0;
    std::map<std::string, HostsGivenUp> hosts_given_up;
    void AddTo(CrawlStats* stats) const;
  };
  struct Parts {
    const CrawlOptions* opts;
    Clock* clock;
    state::StateDb* db;
    frontier::Frontier* frontier;
    HostTable* hosts;
    RobotsGate* robots;
    Admitter* admitter;    // a robots.txt's Sitemap lines; the discovery ratio's fetches
    Recrawler* recrawler;  // done marks
    PagePipeline* pipeline;
    WarcSink* sink;  // attempt records
    OutcomeLog* outcomes;
  };

  // Everything in `parts` must outlive the completions.
  explicit FetchCompletions(Parts parts);
  FetchCompletions(const FetchCompletions&) = delete;
  FetchCompletions& operator=(const FetchCompletions&) = delete;

  // A robots.txt request of the leased host ended (or failed before it was made).
  void OnRobotsDone(InFlight flight, fetch::FetchResult&& result);
  // A page request ended (or failed before it was made).
  void OnPageDone(InFlight flight, fetch::FetchResult&& result);
  // The host is given up for `reason`: every queued URL gets that outcome, later ones too,
  // without a request.
  void KillHost(const std::string& host, std::string_view reason, std::string_view detail);

  // The time this run started (the request rate's seconds count from it).
  void SetRunStart(Clock::TimePoint start);
  // Page requests and errors completed in the last SecondRing::kSeconds seconds.
  void RecentTotals(uint64_t* pages, uint64_t* errors) const;
  // Latency histogram, errors by kind, robots.txt outcomes, politeness wait: the figures of
  // MetricsSnapshot these requests give.
  const MetricsSnapshot& metrics() const;
  const Counters& counters() const;

 private:
  // Rules in force: the Crawl-delay and the Sitemap lines (or the sitemap probe).
  void ApplyRobots(const frontier::Lease& lease, const RobotsGate::FetchStep& step,
                   frontier::Completion* done);
  // Admits a sitemap URL found for the robots.txt of `via`'s host.
  void AdmitSitemap(std::string_view sitemap, const frontier::UrlItem& via);
  void GiveUpHost(const std::string& host, const frontier::UrlItem& leased, std::string_view reason,
                  std::string_view detail, int status);
  // A robots.txt record for the shared crawl, by host key (sent with its capture).
  using SharedRobots = std::pair<std::string, state::RobotsRecord>;
  void DispatchCapture(const frontier::UrlItem& item, fetch::FetchResult&& r, bool robots,
                       std::string outcome, std::string detail,
                       std::optional<state::SeenRecord> previous = std::nullopt,
                       bool not_modified = false,
                       std::optional<SharedRobots> shared_robots = std::nullopt);
  // A request that leaves no WARC record: its page record (docs/metadata.md), written by the
  // writer thread; `done`, if any, is marked once that record is durable.
  void SubmitAttempt(const std::string& url, const fetch::FetchResult& r, std::string outcome,
                     std::string reason, std::optional<DurablePage> done = std::nullopt);
  // A page request completed (rates, per-host activity, metrics).
  void NoteCompletion(const std::string& host, const fetch::FetchResult& r, bool got_response);
  int64_t Second() const;
  void Record(std::string_view url, std::string_view outcome, int status, std::string_view detail);

  const Parts parts_;
  const CrawlOptions& opts_;
  ThreadChecker thread_;
  Clock::TimePoint run_start_{};
  SecondRing rate_;
  MetricsSnapshot metrics_;
  Counters counters_;
};

}  // namespace harvest::crawl
