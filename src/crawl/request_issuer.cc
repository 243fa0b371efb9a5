#include "crawl/request_issuer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/host_key.h"
#include "crawl/admitter.h"
#include "crawl/recrawler.h"
#include "extract/extract.h"

namespace harvest::crawl {

RequestIssuer::RequestIssuer(Parts parts) : parts_(parts), opts_(*parts.opts) {}

void RequestIssuer::Counters::AddTo(CrawlStats* stats) const {
  stats->disallowed += disallowed;
  stats->dns_lookups += dns_lookups;
  stats->dns_failures += dns_failures;
  stats->recrawls += recrawls;
  stats->conditional += conditional;
  stats->lease_waits += lease_waits;
  stats->quota_waits += quota_waits;
}

Status RequestIssuer::Setup() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (opts_.fetcher != nullptr) {
    fetcher_ = opts_.fetcher;
  } else {
    owned_fetcher_ = std::make_unique<fetch::HttpFetcher>(opts_.fetch);
    fetcher_ = owned_fetcher_.get();
  }
  if (Status s = fetcher_->status(); !s.ok()) return s;
  Result<fetch::AddressFilter> filter = fetch::AddressFilter::Make(opts_.allow_addresses);
  if (!filter.ok()) return filter.status();
  address_filter_ = std::move(*filter);
  fetch::PinTable pins;
  if (!opts_.resolve_file.empty()) {
    Result<fetch::PinTable> table = fetch::PinTable::Load(opts_.resolve_file.string());
    if (!table.ok()) return Status::InvalidArgument("resolve file: " + table.status().message());
    pins = std::move(*table);
  }
  fetch::Resolver* resolver = opts_.resolver;
  if (resolver == nullptr && opts_.fetcher == nullptr) {
    Result<std::unique_ptr<fetch::Resolver>> r =
        fetch::NewAresResolver(opts_.dns, parts_.clock, [f = fetcher_] { f->Wakeup(); });
    if (!r.ok()) return r.status();
    owned_resolver_ = std::move(*r);
    resolver = owned_resolver_.get();
  }
  addresses_ = std::make_unique<AddressGate>(std::move(pins), opts_.fetch.connect_to, resolver);
  return Status::Ok();
}

bool RequestIssuer::AwaitingLookup(const std::string& host) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  auto it = awaiting_dns_.find(HostNameAndPort(host).first);
  return it != awaiting_dns_.end() &&
         std::find(it->second.begin(), it->second.end(), host) != it->second.end();
}

bool RequestIssuer::page_limit_reached() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return page_limit_reached_;
}

const RequestIssuer::Counters& RequestIssuer::counters() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return counters_;
}

void RequestIssuer::Record(std::string_view url, std::string_view outcome,
                           std::string_view detail) {
  parts_.outcomes->Record(url, outcome, 0, detail, parts_.clock->WallMicros());
}

void RequestIssuer::HandleLease(frontier::Lease lease) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (parts_.hosts->Blocked(lease.item.host)) {
    // Blocked by the operator after a DNS answer released the host: held again, no loss.
    parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
    parts_.frontier->SetHeld(lease.item.host, true);
    return;
  }
  if (opts_.shared != nullptr && !opts_.shared->MayFetch(lease.item.host)) {
    // The lease on the host's partition is not known to be valid for the safety margin
    // (a renewal is late, e.g. during a Redis failover): no request; the URL goes back to
    // the front of its queue and the host waits. A lease found lost fails the shared crawl,
    // which stops this worker (ConsumeShared).
    parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kRequeue,
                                      .retry_after = std::chrono::milliseconds(500)});
    ++counters_.lease_waits;
    return;
  }
  if (UpgradeLeased(lease)) return;
  if (!parts_.admitter->MayFetch(NameOfHostKey(lease.item.host))) {
    // The name's daily fetch quota is reached (docs/admission.md "Budgets"): no request
    // before the next UTC day; the URL waits at the front of its queue.
    const int64_t wait_us =
        std::max<int64_t>(parts_.admitter->NextDayMicros() - parts_.clock->WallMicros(), 1000);
    parts_.frontier->Complete(lease,
                              {.kind = frontier::CompletionKind::kRequeue,
                               .retry_after = std::chrono::milliseconds(wait_us / 1000 + 1)});
    ++counters_.quota_waits;
    return;
  }
  const HostTable::Host& host = parts_.hosts->Ensure(lease.item.host);
  if (!host.dead_reason.empty()) {
    parts_.recrawler->LeftFrontier(lease.item);
    Record(lease.item.url, host.dead_reason, host.dead_detail);
    parts_.recrawler->MarkDone(lease.item, 0);
    parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
    return;
  }
  if (!host.ip_known && !KnowIp(lease)) return;
  std::optional<url::Url> u = url::Parse(lease.item.url);
  RobotsGate::CheckResult check =
      parts_.robots->Check(lease.item.host, u ? u->path_and_query() : std::string_view("/"));
  switch (check.gate) {
    case RobotsGate::Gate::kFetchRobots: {
      std::string robots_url = parts_.robots->RobotsUrl(lease.item.host);
      // A redirect hop to http:// on a name known to upgrade is asked over https, as a
      // browser would (RFC 6797 §8.3): the name told us not to use http.
      if (std::optional<std::string> https = parts_.hosts->upgrades().Upgrade(robots_url)) {
        robots_url = std::move(*https);
      }
      fetch::FetchRequest req;
      if (!Reachable(lease, /*robots=*/true, robots_url, &req)) return;
      StartFetch(std::move(lease), /*robots=*/true, std::move(robots_url), std::move(req));
      return;
    }
    case RobotsGate::Gate::kWait:
      // No rules yet and the next robots.txt attempt not due: back to the front of the
      // queue, the host held until then (no request was made).
      parts_.frontier->Complete(
          lease, {.kind = frontier::CompletionKind::kRequeue,
                  .retry_after = std::chrono::ceil<std::chrono::milliseconds>(check.wait)});
      return;
    case RobotsGate::Gate::kDisallowed:
      parts_.recrawler->LeftFrontier(lease.item);
      ++counters_.disallowed;
      Record(lease.item.url, "disallowed", check.detail);
      parts_.recrawler->MarkDone(lease.item, 0);
      parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
      return;
    case RobotsGate::Gate::kAllowed:
      break;
  }
  fetch::FetchRequest req;
  if (!Reachable(lease, /*robots=*/false, lease.item.url, &req)) return;
  ++pages_started_;
  parts_.recrawler->NoteStarted(lease.item);
  if (opts_.max_pages > 0 && pages_started_ >= opts_.max_pages) page_limit_reached_ = true;
  std::string url = lease.item.url;
  StartFetch(std::move(lease), /*robots=*/false, std::move(url), std::move(req));
}

// Redirects are never followed inside a transfer: each hop is a request of its own in the
// host's slot (docs/architecture.md §1.1).
void RequestIssuer::StartFetch(frontier::Lease lease, bool robots, std::string url,
                               fetch::FetchRequest req) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  req.id = next_fetch_id_++;
  req.url = std::move(url);
  const uint64_t id = req.id;
  // Every response leaves its connection open for the host's next request, even when
  // nothing is queued yet: a page's links are admitted only after it has been processed.
  // The fetcher bounds what stays open (fetch.max_idle_connections hosts, 30 s each) and
  // keeps one connection cache per host, so idle connections cost no lookups.
  req.reuse_connection = true;
  // A sitemap may be 50 MiB uncompressed (sitemaps.org): its request alone gets that cap
  // when the fetcher's is lower, so the memory of every other fetch stays as configured.
  if (!robots && lease.item.sitemap) {
    req.max_body_bytes = std::max(opts_.fetch.max_body_bytes, extract::kMaxSitemapBytes);
  }
  InFlight flight{.lease = std::move(lease), .robots = robots};
  if (!robots && flight.lease.item.recrawl) {
    // A recrawl: the last stored version decides change and interval; its validators make
    // the request conditional (docs/freshness.md).
    flight.previous = parts_.recrawler->Previous(flight.lease.item);
    if (flight.previous && opts_.freshness.conditional_get) {
      if (!flight.previous->etag.empty()) {
        req.headers.emplace_back("If-None-Match", flight.previous->etag);
      }
      if (!flight.previous->last_modified.empty()) {
        req.headers.emplace_back("If-Modified-Since", flight.previous->last_modified);
      }
      flight.conditional = !req.headers.empty();
      if (flight.conditional) ++counters_.conditional;
    }
    ++counters_.recrawls;
  }
  in_flight_.emplace(id, std::move(flight));
  fetcher_->Start(std::move(req), [this, id](fetch::FetchResult&& r) {
    auto it = in_flight_.find(id);
    InFlight flight = std::move(it->second);
    in_flight_.erase(it);
    if (flight.robots) {
      parts_.completions->OnRobotsDone(std::move(flight), std::move(r));
    } else {
      parts_.completions->OnPageDone(std::move(flight), std::move(r));
    }
  });
}

void RequestIssuer::HoldForLookup(frontier::Lease& lease, const std::string& name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  const std::string host = lease.item.host;
  std::vector<std::string>& waiting = awaiting_dns_[name];
  if (waiting.empty()) ++counters_.dns_lookups;
  waiting.push_back(host);
  parts_.frontier->SetHeld(host, true);
  parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
}

bool RequestIssuer::KnowIp(frontier::Lease& lease) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  auto [name, port] = HostNameAndPort(lease.item.host);
  AddressGate::Answer a = addresses_->Lookup(name, port);
  switch (a.kind) {
    case AddressGate::Kind::kPending:
      HoldForLookup(lease, name);
      return false;
    case AddressGate::Kind::kFailed:
      return true;  // Reachable() records the failure on the request path
    case AddressGate::Kind::kReady:
      break;
  }
  if (a.address.empty()) return true;  // the fetcher resolves it; the IP comes with the response
  parts_.hosts->NoteIp(lease.item.host, a.address);
  if (opts_.frontier.per_ip_limit == 0) return true;
  // Leased before the frontier knew the IP: lease it again under the IP's limit.
  parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
  return false;
}

bool RequestIssuer::Reachable(frontier::Lease& lease, bool robots, const std::string& url,
                              fetch::FetchRequest* req) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  std::optional<url::Url> u = url::Parse(url);
  if (!u) return true;  // the fetcher reports the bad URL
  auto [name, port] = HostNameAndPort(u->origin_key());
  if (name.empty()) return true;
  AddressGate::Answer a = addresses_->Lookup(name, port);
  switch (a.kind) {
    case AddressGate::Kind::kReady:
      // Checked on the address the request connects to (pinned, routed or resolved here);
      // without a resolver of ours (tests on a fake fetcher) the fetcher resolves it.
      if (!a.address.empty()) {
        if (std::optional<std::string> range = address_filter_.Blocked(a.address)) {
          BlockAddress(lease, url, a.address, *range);
          return false;
        }
      }
      if (a.pinned) {
        req->connect_address = std::move(a.address);
        req->connect_port = a.port;
      }
      return true;
    case AddressGate::Kind::kPending:
      HoldForLookup(lease, name);
      return false;
    case AddressGate::Kind::kFailed:
      break;
  }
  // The name does not resolve: the same path as a fetch that failed with dns_error (retried
  // on the retry schedule, then gave-up with the cause), but no request was made.
  ++counters_.dns_failures;
  fetch::FetchResult r;
  r.url = url;
  r.effective_url = url;
  r.outcome = fetch::FetchOutcome::kDnsError;
  r.error = name + ": " + a.error;
  r.start_wall_us = parts_.clock->WallMicros();
  InFlight flight{.lease = std::move(lease), .robots = robots, .no_request = true};
  if (robots) {
    parts_.completions->OnRobotsDone(std::move(flight), std::move(r));
  } else {
    parts_.completions->OnPageDone(std::move(flight), std::move(r));
  }
  return false;
}

bool RequestIssuer::UpgradeLeased(frontier::Lease& lease) {
  if (!lease.item.url.starts_with("http://")) return false;
  // The host's robots.txt redirects are being followed (to https, most likely): they end
  // first, so the rules they find also serve the origins they passed (RobotsGate).
  if (parts_.robots->FollowingRedirects(lease.item.host)) return false;
  std::string why;
  std::optional<std::string> twin = parts_.hosts->upgrades().Upgrade(lease.item.url, &why);
  if (!twin) return false;
  std::optional<url::Url> u = url::ParseCanonical(*twin, nullptr, opts_.canon);
  if (!u) return false;
  const frontier::UrlItem item = lease.item;
  parts_.recrawler->LeftFrontier(item);
  Record(item.url, "upgraded", u->href() + " (" + why + ")");
  parts_.recrawler->MarkDone(item, 0);
  parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
  // The twin takes the URL's place: its depth, one more hop, like a redirect's target.
  FoundLink link = MakeFoundLink(*u);
  link.redirect = true;
  parts_.admitter->Admit(link, item);
  return true;
}

void RequestIssuer::BlockAddress(frontier::Lease& lease, const std::string& url,
                                 const std::string& address, const std::string& range) {
  const std::string detail =
      url + ": " + address + " is " + range + " (--allow-address opens a range)";
  const frontier::UrlItem item = lease.item;
  parts_.completions->KillHost(item.host, "blocked-address", detail);
  parts_.recrawler->LeftFrontier(item);
  Record(item.url, "blocked-address", detail);
  parts_.recrawler->MarkDone(item, 0);
  parts_.frontier->Complete(lease, {.kind = frontier::CompletionKind::kNoRequest});
}

void RequestIssuer::ConsumeResolved() {
  HARVEST_ASSERT_ON_THREAD(thread_);
  for (fetch::Resolution& r : addresses_->TakeResolved()) {
    auto it = awaiting_dns_.find(r.name);
    if (it == awaiting_dns_.end()) continue;
    if (!r.ok) spdlog::info("dns: {} does not resolve: {}", r.name, r.error);
    for (const std::string& host : it->second) {
      if (r.ok) parts_.hosts->NoteIp(host, r.address);
      parts_.frontier->SetHeld(host, false);
    }
    awaiting_dns_.erase(it);
  }
}

}  // namespace harvest::crawl
