// RequestIssuer: from a lease to a request, on the I/O thread (docs/architecture.md §2
// [lease] → [address] → [fetch]). A leased URL of a host the operator blocked, a host given
// up, or a partition whose lease is not known to be valid goes back or gets its outcome; a
// host's IP is known before its first lease counts against the per-IP limits (a name that
// does not resolve is recorded like a failed fetch, on the retry schedule, without holding up
// any other host); robots.txt is fetched before the host's first page and obeyed; a recrawl
// is made conditional. It owns the fetcher (the options' or an HttpFetcher), the address gate
// (resolve file, --connect-to, the resolver) and the requests in flight, whose ends go to
// FetchCompletions.
//
// Thread-safety: event-loop-only (every method asserts it), except fetcher() whose Wakeup()
// any thread may call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "crawl/address_gate.h"
#include "crawl/crawl.h"
#include "crawl/fetch_completions.h"
#include "crawl/host_table.h"
#include "crawl/outcome_log.h"
#include "crawl/robots_gate.h"
#include "fetch/fetch.h"
#include "fetch/resolver.h"
#include "frontier/frontier.h"

namespace harvest::crawl {

class Admitter;
class Recrawler;

class RequestIssuer {
 public:
  // What the issuer counted in this run (merged into CrawlStats).
  struct Counters {
    uint64_t disallowed = 0;
    uint64_t dns_lookups = 0;
    uint64_t dns_failures = 0;
    uint64_t recrawls = 0;
    uint64_t conditional = 0;
    uint64_t lease_waits = 0;
    uint64_t quota_waits = 0;  // leases put back: their host's daily fetch quota was reached
    void AddTo(CrawlStats* stats) const;
  };
  struct Parts {
    const CrawlOptions* opts;
    Clock* clock;
    frontier::Frontier* frontier;
    HostTable* hosts;
    RobotsGate* robots;
    Recrawler* recrawler;
    FetchCompletions* completions;
    Admitter* admitter;  // the https twins of http URLs leased after their host upgraded
    OutcomeLog* outcomes;
  };

  // Everything in `parts` must outlive the issuer.
  explicit RequestIssuer(Parts parts);
  RequestIssuer(const RequestIssuer&) = delete;
  RequestIssuer& operator=(const RequestIssuer&) = delete;

  // The fetcher (the options' or a new HttpFetcher), its status; then the resolve file,
  // --connect-to routes and the resolver (its thread wakes the fetcher).
  Status Setup();
  fetch::Fetcher* fetcher() const { return fetcher_; }

  // Starts the lease's request (robots.txt first when the host's rules are not known), or
  // puts it back, holds its host for a lookup, or gives the URL its outcome.
  void HandleLease(frontier::Lease lease);
  // Lookups that finished: their hosts are released.
  void ConsumeResolved();
  // The host (a frontier host key) is held until the lookup of its name ends.
  bool AwaitingLookup(const std::string& host) const;
  // Page requests reached options.max_pages: no more leases.
  bool page_limit_reached() const;
  const Counters& counters() const;

 private:
  // `req` carries the connect address (Reachable); the rest is filled here.
  void StartFetch(frontier::Lease lease, bool robots, std::string url, fetch::FetchRequest req);
  // False when the lease was handled here — put back and held for a lookup, or completed as
  // a DNS failure. Fills the request's connect address.
  bool Reachable(frontier::Lease& lease, bool robots, const std::string& url,
                 fetch::FetchRequest* req);
  // Before a host's first lease: its IP for the per-IP limits. False when the lease was put
  // back (held for a lookup, or to be leased again under its IP's limit).
  bool KnowIp(frontier::Lease& lease);
  void HoldForLookup(frontier::Lease& lease, const std::string& name);
  // The host's address is in a blocked range: the leased URL and every other URL of the host
  // get blocked-address, without a request.
  void BlockAddress(frontier::Lease& lease, const std::string& url, const std::string& address,
                    const std::string& range);
  void Record(std::string_view url, std::string_view outcome, std::string_view detail);
  // An http:// URL whose host is now known to upgrade: recorded `upgraded`, its https://
  // twin admitted in its place, no request. False when the URL is to be requested as is.
  bool UpgradeLeased(frontier::Lease& lease);

  const Parts parts_;
  const CrawlOptions& opts_;
  ThreadChecker thread_;
  std::unique_ptr<fetch::Fetcher> owned_fetcher_;    // the default HttpFetcher
  fetch::Fetcher* fetcher_ = nullptr;                // options' fetcher or owned_fetcher_
  std::unique_ptr<fetch::Resolver> owned_resolver_;  // the default c-ares resolver
  std::unique_ptr<AddressGate> addresses_;
  fetch::AddressFilter address_filter_;  // options.allow_addresses opened
  // Host keys held until the lookup of their name ends, by name.
  std::unordered_map<std::string, std::vector<std::string>> awaiting_dns_;
  std::unordered_map<uint64_t, InFlight> in_flight_;
  uint64_t next_fetch_id_ = 1;
  uint64_t pages_started_ = 0;
  bool page_limit_reached_ = false;
  Counters counters_;
};

}  // namespace harvest::crawl
