// RobotsGate: the crawl's robots.txt gate (docs/architecture.md §2 [robots gate]; RFC 9309).
//
// It keeps, per host (the frontier's host key: scheme://name[:port], RFC 9309 §2.3 — a
// robots.txt applies to one scheme, host and port), the rules in force and their expiry,
// and decides for each leased URL: fetch robots.txt first (none yet, or expired), allowed,
// or disallowed. It turns each robots.txt fetch into a step for the crawl:
//
//   3xx       follow the Location with the next request in the host's slot, at most
//             robots::kMaxRedirects hops (RFC 9309 §2.3.1.2); more: unavailable, allow all;
//   2xx, 4xx  rules in force until now + ttl (4xx except 429: allow all), with the group's
//             Crawl-delay and the Sitemap lines;
//   5xx, 429, unreachable
//             disallow all and retry after frontier::RetryBackoff; after max_attempts
//             consecutive failures the host is unavailable (the crawl gives its URLs up).
//
// Bodies are parsed after undoing Content-Encoding, up to robots::kMaxRobotsBytes
// (RFC 9309 §2.5); the decoded body is saved with the status in the crawl state so a
// restart neither refetches robots.txt early nor loses its rules.
//
// Thread-safety: none; owned by the crawl's I/O thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "fetch/fetch.h"
#include "frontier/frontier.h"
#include "robots/robots.h"
#include "state/state.h"

namespace harvest::crawl {

// Decoded robots.txt bytes kept: what the parser reads (RFC 9309 §2.5) and no more.
inline constexpr size_t kRobotsDecodeCap = robots::kMaxRobotsBytes;

class RobotsGate {
 public:
  struct Options {
    std::string product_token;            // our robots.txt product token
    std::chrono::seconds ttl{24 * 3600};  // RFC 9309 §2.4: refetch after 24 h
    frontier::FrontierOptions retry;      // max_attempts and backoff for failures
  };

  enum class Gate { kFetchRobots, kAllowed, kDisallowed };
  struct CheckResult {
    Gate gate = Gate::kFetchRobots;
    std::string detail;  // kDisallowed: the deciding rule and its line
  };

  enum class Step {
    kRedirect,     // request RobotsUrl(host) next, in the same slot
    kRules,        // rules in force (crawl_delay and sitemaps filled)
    kRetry,        // temporary failure: try again after retry_after
    kUnavailable,  // max_attempts temporary failures: give the host up (detail says why)
  };
  struct FetchStep {
    Step step = Step::kRules;
    int status = 0;      // the HTTP status the policy used (0: unreachable)
    std::string detail;  // kRetry/kUnavailable: the cause, e.g. "robots.txt: HTTP 503"
    std::chrono::seconds retry_after{0};
    std::optional<std::chrono::milliseconds> crawl_delay;
    std::vector<std::string> sitemaps;
  };

  // `db` (may be nullptr: nothing persisted) must outlive the gate.
  RobotsGate(Options options, Clock* clock, state::StateDb* db);

  // Resume: the host's robots.txt as saved by an earlier run.
  void Restore(const std::string& host, const state::RobotsRecord& record);
  // What to do with a URL of `host` (path_and_query as sent on the wire).
  CheckResult Check(const std::string& host, std::string_view path_and_query) const;
  // The URL the host's next robots.txt request asks for: <host>/robots.txt, or the redirect
  // target being followed.
  std::string RobotsUrl(const std::string& host) const;
  // A robots.txt request of `host` completed (any outcome). Saves the result.
  FetchStep OnFetched(const std::string& host, const fetch::FetchResult& result);

  // Hosts with robots state.
  size_t hosts() const { return hosts_.size(); }

 private:
  struct HostRobots {
    std::optional<robots::RobotsRules> rules;
    Clock::TimePoint expiry{};
    int failures = 0;
    std::string redirect_url;  // "" = <host>/robots.txt
    int hops = 0;              // redirects followed for the current robots.txt
  };

  std::optional<std::string> RedirectTarget(const fetch::FetchResult& r) const;
  FetchStep Failure(HostRobots& h, int status, const fetch::FetchResult& r);
  FetchStep InForce(HostRobots& h, const robots::RobotsRules& rules, int status);
  void Save(const std::string& host, const HostRobots& h, int status, int redirects,
            const std::string& body);

  Options options_;
  Clock* clock_;
  state::StateDb* db_;
  std::unordered_map<std::string, HostRobots> hosts_;
};

// True when an HTTP response arrived: complete, cut at the size cap, or cut mid-body by a
// timeout or disconnect after its head arrived. A cut body is stored with WARC-Truncated and
// is final: retrying a body that never ends would only load the server again.
bool GotResponse(const fetch::FetchResult& r);

// The cause of a failed fetch for outcome details: "HTTP 503", "connect_error: <message>".
std::string FetchFailureDetail(const fetch::FetchResult& r);

}  // namespace harvest::crawl
