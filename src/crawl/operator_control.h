// OperatorControl: the admin API's commands, run on the I/O thread (posted there through the
// CommandChannel; semantics in docs/operating.md): seed injection (durable before the answer),
// status, host policies and blocks (saved with the host's override in the host table), a
// host's view, pause and resume, and the figures of /metrics.
//
// Thread-safety: event-loop-only; every method asserts it runs on the crawl's I/O thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/backend.h"
#include "base/clock.h"
#include "base/thread_checker.h"
#include "crawl/crawl.h"
#include "crawl/metrics.h"
#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::crawl {

class Admitter;
class FetchCompletions;
class HostTable;
class RequestIssuer;
class WarcSink;

class OperatorControl {
 public:
  struct Parts {
    const CrawlOptions* opts;
    Clock* clock;
    state::StateDb* db;
    frontier::Frontier* frontier;
    HostTable* hosts;
    Admitter* admitter;
    RequestIssuer* issuer;          // hosts waiting for a lookup stay held when unblocked
    FetchCompletions* completions;  // request rate, metrics
    WarcSink* sink;                 // what was stored
    const std::atomic<bool>* stopping;
    // The crawl's figures now (CrawlStats as merged from its parts).
    std::function<CrawlStats()> stats;
  };

  // Everything in `parts` must outlive the control.
  explicit OperatorControl(Parts parts);
  OperatorControl(const OperatorControl&) = delete;
  OperatorControl& operator=(const OperatorControl&) = delete;

  Result<admin::SeedResult> InjectSeeds(const admin::SeedRequest& request);
  admin::StatusSnapshot GetStatus() const;
  // `host`: "a.test" / "a.test:8080" means its http and https hosts, "https://a.test" only
  // that one; NotFound when the crawl never met it.
  Status SetPolicy(const std::string& host, const admin::HostPolicy& policy);
  Result<nlohmann::json> GetHost(const std::string& host);
  Status SetBlocked(const std::string& host, bool blocked);
  void Pause(bool pause);
  // Paused by the operator: nothing new starts, the crawl is not complete.
  bool paused() const;
  MetricsSnapshot Metrics() const;

 private:
  // Frontier host keys an admin API host name means (known to this crawl).
  std::vector<std::string> ResolveHost(const std::string& host);
  bool KnownHost(const std::string& origin);

  const Parts parts_;
  const CrawlOptions& opts_;
  ThreadChecker thread_;
  bool paused_ = false;
};

}  // namespace harvest::crawl
