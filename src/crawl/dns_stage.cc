// The address of a leased URL's host, before its request (docs/architecture.md §2
// [address]): the per-IP limits need a host's IP before its first lease counts against it,
// and a name that does not resolve is recorded like a failed fetch, on the retry schedule,
// without holding up any other host.
#include <spdlog/spdlog.h>

#include "crawl/crawler_impl.h"

namespace harvest::crawl {

void Crawler::Impl::HoldForLookup(frontier::Lease& lease, const std::string& name) {
  const std::string host = lease.item.host;
  std::vector<std::string>& waiting = awaiting_dns_[name];
  if (waiting.empty()) ++stats_.dns_lookups;
  waiting.push_back(host);
  frontier_->SetHeld(host, true);
  frontier_->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
}

bool Crawler::Impl::KnowIp(frontier::Lease& lease) {
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
  NoteIp(lease.item.host, a.address);
  if (opts_.frontier.per_ip_limit == 0) return true;
  // Leased before the frontier knew the IP: lease it again under the IP's limit.
  frontier_->Complete(lease, {.kind = frontier::CompletionKind::kPutBack});
  return false;
}

bool Crawler::Impl::Reachable(frontier::Lease& lease, bool robots, const std::string& url,
                              fetch::FetchRequest* req) {
  std::optional<url::Url> u = url::Parse(url);
  if (!u) return true;  // the fetcher reports the bad URL
  auto [name, port] = HostNameAndPort(u->origin_key());
  if (name.empty()) return true;
  AddressGate::Answer a = addresses_->Lookup(name, port);
  switch (a.kind) {
    case AddressGate::Kind::kReady:
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
  ++stats_.dns_failures;
  fetch::FetchResult r;
  r.url = url;
  r.effective_url = url;
  r.outcome = fetch::FetchOutcome::kDnsError;
  r.error = name + ": " + a.error;
  r.start_wall_us = WallNow();
  InFlight flight{.lease = std::move(lease), .robots = robots, .no_request = true};
  if (robots) {
    OnRobotsDone(std::move(flight), std::move(r));
  } else {
    OnPageDone(std::move(flight), std::move(r));
  }
  return false;
}

void Crawler::Impl::ConsumeResolved() {
  for (fetch::Resolution& r : addresses_->TakeResolved()) {
    auto it = awaiting_dns_.find(r.name);
    if (it == awaiting_dns_.end()) continue;
    if (!r.ok) spdlog::info("dns: {} does not resolve: {}", r.name, r.error);
    for (const std::string& host : it->second) {
      if (r.ok) NoteIp(host, r.address);
      frontier_->SetHeld(host, false);
    }
    awaiting_dns_.erase(it);
  }
}

}  // namespace harvest::crawl
