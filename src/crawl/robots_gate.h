// RobotsGate: the crawl's robots.txt gate (docs/architecture.md §2 [robots gate]; RFC 9309).
//
// It keeps, per host (the frontier's host key: scheme://name[:port], RFC 9309 §2.3 — a
// robots.txt applies to one scheme, host and port), the rules in force and when robots.txt
// is due again, and decides for each leased URL: fetch robots.txt first (none yet, or due),
// allowed, disallowed, or wait (no rules yet and the next attempt not due). It turns each
// robots.txt fetch into a step for the crawl:
//
//   3xx       follow the Location with the next request in the host's slot, at most
//             robots::kMaxRedirects hops (RFC 9309 §2.3.1.2); more: unavailable, allow all.
//             A Location that is another origin's robots.txt whose rules are in force here
//             (http://h/robots.txt -> https://h/robots.txt) is not asked again: its rules
//             are taken, until that copy is due; and rules reached through redirects that
//             end at another origin's robots.txt are that origin's too when it has none. A
//             failure reached through permanent redirects is tried again where they led;
//   2xx, 4xx  rules in force until now + ttl (4xx except 429: allow all), with the group's
//             Crawl-delay and the Sitemap lines (RFC 9309 §2.4);
//   5xx, 429, timeouts and other network errors: an outage (RFC 9309 §2.3.1.4).
//             With a cached copy (an earlier 2xx/4xx) the copy stays in force; without one
//             the host is disallowed. Either way robots.txt is tried again on the outage
//             schedule (OutageRetryWait: at most kOutageEarlyWait apart during the first
//             kOutageEarly, then doubling up to kOutageMaxWait). A host with no copy is
//             unavailable (the crawl gives its URLs up) once the outage has lasted
//             `patience`; patience 0 never gives up;
//   DNS and connection failures (kDnsError, kConnectError): no outage but a host that is
//             not there: retried after frontier::RetryBackoff like a page, and after
//             max_attempts consecutive ones the host is unreachable (its URLs gave-up).
//
// Bodies are parsed after undoing Content-Encoding, up to robots::kMaxRobotsBytes
// (RFC 9309 §2.5); the decoded body is saved with the status in the crawl state so a
// restart neither refetches robots.txt early nor loses its rules. A host without a copy
// saves its outage too (start, failures), so a restart keeps the schedule and the patience;
// a failed refetch over a cached copy is not saved (the saved record keeps the copy, whose
// expiry has passed: a restart refetches at once).
//
// Thread-safety: none; owned by the crawl's I/O thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
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
    // Outage a host without a cached copy is given before it is unavailable; 0: never.
    std::chrono::seconds patience{1800};
    // backoff: the first waits of an outage (capped at kOutageEarlyWait) and the waits
    // after DNS/connection failures; max_attempts: DNS/connection failures before the host
    // is unreachable.
    frontier::FrontierOptions retry;
  };

  enum class Gate {
    kFetchRobots,  // request RobotsUrl(host) in this slot
    kAllowed,
    kDisallowed,
    kWait,  // no rules yet, the next attempt is not due: hold the URL for `wait`
  };
  struct CheckResult {
    Gate gate = Gate::kFetchRobots;
    std::string detail;      // kDisallowed: the deciding rule and its line
    Clock::Duration wait{};  // kWait: until robots.txt is due
  };

  enum class Step {
    kRedirect,     // request RobotsUrl(host) next, in the same slot
    kRules,        // rules in force (crawl_delay and sitemaps filled)
    kRetry,        // failure, no cached copy: host disallowed, try again after retry_after
    kCached,       // failed refetch: the cached copy stays in force; refetch after retry_after
    kUnavailable,  // outage longer than the patience, no copy: give the host up
                   // (robots-unavailable; detail says why and for how long)
    kUnreachable,  // max_attempts DNS/connection failures in a row: give the host up (gave-up)
  };
  struct FetchStep {
    Step step = Step::kRules;
    int status = 0;  // the HTTP status the policy used (0: unreachable)
    // kRetry, kCached, kUnavailable, kUnreachable: the cause, e.g. "robots.txt: HTTP 503",
    // "robots.txt: HTTP 503 for 30m (9 attempts)", "robots.txt: dns_error: ... (3 attempts)".
    std::string detail;
    std::chrono::seconds retry_after{0};  // kRetry, kCached: when robots.txt is due again
    std::optional<std::chrono::milliseconds> crawl_delay;
    std::vector<std::string> sitemaps;
    // The record this fetch saved in the crawl state, if it saved one (none when a cached copy
    // stays in force, or without a crawl state): a shared crawl shares it once the fetch's
    // capture is durable.
    std::optional<state::RobotsRecord> saved;
    // kRules reached through redirects that passed another origin's robots.txt, which had
    // no rules in force: that origin (a host key) now has the same rules, and the record it
    // saved; its Crawl-delay is `crawl_delay` too. "" when none.
    std::string also_host;
    std::optional<state::RobotsRecord> also_saved;
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
  // A robots.txt request of `host` completed (any outcome). Saves the result (and returns
  // the saved record in FetchStep::saved).
  FetchStep OnFetched(const std::string& host, const fetch::FetchResult& result);

  // The host's robots.txt request is following redirects (the next one is a hop).
  bool FollowingRedirects(const std::string& host) const {
    auto it = hosts_.find(host);
    return it != hosts_.end() && it->second.hops > 0;
  }
  // Hosts with robots state.
  size_t hosts() const { return hosts_.size(); }
  // The host left RAM (docs/architecture.md §1.5): its rules come back with Restore from
  // the saved record. REQUIRES: no robots.txt request of the host in flight.
  void Forget(const std::string& host) { hosts_.erase(host); }

 private:
  struct HostRobots {
    // In force: the cached copy, or while there is none the temporary disallow-all.
    std::optional<robots::RobotsRules> rules;
    Clock::TimePoint expiry{};        // robots.txt due again (the TTL, or the next attempt)
    int failures = 0;                 // consecutive failed attempts (the current outage)
    int unreachable = 0;              // of those, consecutive DNS/connection failures
    Clock::TimePoint outage_since{};  // the outage's first failure (failures > 0)
    std::string redirect_url;         // "" = <host>/robots.txt
    int hops = 0;                     // redirects followed for the current robots.txt
    std::string via_origin;       // the first other origin whose robots.txt the redirects passed
    bool permanent_hops = false;  // every redirect followed was permanent (301, 308)
  };

  std::optional<std::string> RedirectTarget(const fetch::FetchResult& r) const;
  // A redirect of `host`'s robots.txt to `target`, the robots.txt of another origin whose
  // rules are in force: `host` takes those rules (and saves them) without a request.
  std::optional<FetchStep> AdoptCached(const std::string& host, HostRobots& h,
                                       const std::string& target);
  // The origin of `url` when it is the robots.txt of an origin other than `host`, else "".
  static std::string RobotsOrigin(const std::string& url, const std::string& host);
  // The redirects of `host`'s robots.txt passed `origin`'s robots.txt: an origin without
  // rules in force takes the same rules (FetchStep::also_host).
  void ShareWithOrigin(const std::string& host, const std::string& origin, int status,
                       const std::string& body, FetchStep* step);
  // A failed attempt; `rules` is the temporary disallow-all it produced.
  FetchStep Failure(const std::string& host, HostRobots& h, int status, int redirects,
                    const fetch::FetchResult& r, robots::RobotsRules rules,
                    const std::string& body);
  FetchStep InForce(HostRobots& h, const robots::RobotsRules& rules, int status);
  // Writes the host's record to the crawl state; returns it (nullopt without a state).
  std::optional<state::RobotsRecord> Save(const std::string& host, const HostRobots& h, int status,
                                          int redirects, const std::string& body);

  Options options_;
  Clock* clock_;
  state::StateDb* db_;
  std::unordered_map<std::string, HostRobots> hosts_;
};

// The outage schedule (RFC 9309 §2.3.1.4; docs/politeness.md "robots.txt outages").
inline constexpr std::chrono::minutes kOutageEarly{30};     // the first part of an outage
inline constexpr std::chrono::minutes kOutageEarlyWait{5};  // its longest wait
inline constexpr std::chrono::hours kOutageMaxWait{6};      // the longest wait after it

// The wait before the next robots.txt attempt after the `failures`-th failed attempt of an
// outage, `elapsed` after its first failure: min(RetryBackoff(failures), 5 min) during the
// first 30 minutes; then 5 min plus the time beyond 30 minutes, which doubles the wait with
// each attempt (5, 10, 20, 40 min, ...), at most 6 h.
std::chrono::seconds OutageRetryWait(const frontier::FrontierOptions& retry, int failures,
                                     Clock::Duration elapsed);

// True when an HTTP response arrived: complete, cut at the size cap, or cut mid-body by a
// timeout or disconnect after its head arrived. A cut body is stored with WARC-Truncated and
// is final: retrying a body that never ends would only load the server again.
bool GotResponse(const fetch::FetchResult& r);

// The cause of a failed fetch for outcome details: "HTTP 503", "connect_error: <message>".
std::string FetchFailureDetail(const fetch::FetchResult& r);

}  // namespace harvest::crawl
