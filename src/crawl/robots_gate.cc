#include "crawl/robots_gate.h"

#include <algorithm>
#include <utility>

#include "base/duration.h"
#include "extract/extract.h"
#include "url/url.h"

namespace harvest::crawl {
namespace {

bool IsUnreachable(const fetch::FetchResult& r) {
  return !GotResponse(r) && (r.outcome == fetch::FetchOutcome::kDnsError ||
                             r.outcome == fetch::FetchOutcome::kConnectError);
}

}  // namespace

std::chrono::seconds OutageRetryWait(const frontier::FrontierOptions& retry, int failures,
                                     Clock::Duration elapsed) {
  using std::chrono::seconds;
  if (elapsed < kOutageEarly) {
    return std::min<seconds>(frontier::RetryBackoff(retry, failures), kOutageEarlyWait);
  }
  const seconds beyond = std::chrono::duration_cast<seconds>(elapsed - kOutageEarly);
  return std::min<seconds>(kOutageEarlyWait + beyond, kOutageMaxWait);
}

bool GotResponse(const fetch::FetchResult& r) {
  if (r.status <= 0) return false;
  return r.outcome == fetch::FetchOutcome::kOk || r.outcome == fetch::FetchOutcome::kTruncated ||
         !r.truncated.empty();
}

std::string FetchFailureDetail(const fetch::FetchResult& r) {
  if (GotResponse(r)) return "HTTP " + std::to_string(r.status);
  std::string detail(fetch::OutcomeName(r.outcome));
  if (!r.error.empty()) detail += ": " + r.error;
  return detail;
}

RobotsGate::RobotsGate(Options options, Clock* clock, state::StateDb* db)
    : options_(std::move(options)), clock_(clock), db_(db) {}

void RobotsGate::Restore(const std::string& host, const state::RobotsRecord& record) {
  HostRobots& h = hosts_[host];
  h.rules = robots::FromFetch(record.status, record.body, record.redirects);
  h.expiry = clock_->Now() + std::chrono::microseconds(record.expiry_us - clock_->WallMicros());
  h.failures = record.failures;
  h.unreachable = record.unreachable;
  // A record of an older version has no outage start: the outage starts now.
  h.outage_since =
      record.outage_since_us != 0
          ? clock_->Now() + std::chrono::microseconds(record.outage_since_us - clock_->WallMicros())
          : clock_->Now();
}

RobotsGate::CheckResult RobotsGate::Check(const std::string& host,
                                          std::string_view path_and_query) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || !it->second.rules) return {.gate = Gate::kFetchRobots};
  const HostRobots& h = it->second;
  const Clock::TimePoint now = clock_->Now();
  if (now >= h.expiry) return {.gate = Gate::kFetchRobots};
  // No copy yet: the host waits for its next attempt; its URLs are not disallowed for good.
  if (h.rules->temporary()) return {.gate = Gate::kWait, .wait = h.expiry - now};
  robots::MatchResult m = h.rules->Check(options_.product_token, path_and_query);
  if (m.allowed) return {.gate = Gate::kAllowed};
  std::string detail = m.line > 0 ? m.rule + " (robots.txt line " + std::to_string(m.line) + ")"
                                  : "robots.txt unavailable (" + m.rule + ")";
  return {.gate = Gate::kDisallowed, .detail = std::move(detail)};
}

std::string RobotsGate::RobotsUrl(const std::string& host) const {
  auto it = hosts_.find(host);
  if (it != hosts_.end() && !it->second.redirect_url.empty()) return it->second.redirect_url;
  return host + "/robots.txt";
}

std::optional<std::string> RobotsGate::RedirectTarget(const fetch::FetchResult& r) const {
  std::optional<url::Url> from = url::Parse(r.url);
  std::optional<std::string_view> location = r.Header("location");
  if (!from || !location) return std::nullopt;
  std::optional<url::Url> to = url::Parse(*location, &*from);
  if (!to || (to->scheme() != "http" && to->scheme() != "https")) return std::nullopt;
  return to->href();
}

RobotsGate::FetchStep RobotsGate::OnFetched(const std::string& host, const fetch::FetchResult& r) {
  HostRobots& h = hosts_[host];
  int status = GotResponse(r) ? r.status : 0;
  int redirects = h.hops;
  if (status >= 300 && status < 400) {
    std::optional<std::string> target = RedirectTarget(r);
    if (target && h.hops < robots::kMaxRedirects) {
      // To another origin's robots.txt already in force here (http://h/robots.txt -> 301 ->
      // https://h/robots.txt, most of the web): those rules, without asking again.
      if (std::optional<FetchStep> adopted = AdoptCached(host, h, *target)) return *adopted;
      if (h.via_origin.empty()) h.via_origin = RobotsOrigin(*target, host);
      h.permanent_hops = (h.hops == 0 || h.permanent_hops) && (status == 301 || status == 308);
      h.redirect_url = std::move(*target);
      ++h.hops;
      return {.step = Step::kRedirect, .status = status};
    }
    redirects = robots::kMaxRedirects + 1;  // RFC 9309 §2.3.1.2: unavailable (allow all)
  }
  std::string via = std::exchange(h.via_origin, std::string());
  std::string followed = std::exchange(h.redirect_url, std::string());
  const int hops = std::exchange(h.hops, 0);
  extract::DecodeResult decoded =
      extract::DecodeContent(r.Header("content-encoding").value_or(""), r.body, kRobotsDecodeCap);
  // An undecodable 2xx is no robots.txt: treat it as unreachable and retry later. A body
  // over the cap decodes to its first kRobotsDecodeCap bytes, which is what is parsed.
  if (!decoded.ok && !decoded.too_large && status >= 200 && status < 300) status = 0;
  if (decoded.body.size() > kRobotsDecodeCap) decoded.body.resize(kRobotsDecodeCap);
  robots::RobotsRules rules = robots::FromFetch(status, decoded.body, redirects);
  if (rules.temporary()) {
    FetchStep step = Failure(host, h, status, redirects, r, std::move(rules), decoded.body);
    if (hops > 0 && h.permanent_hops) {
      // Reached through permanent redirects (RFC 9110 §15.4.2: they may be remembered): the
      // next attempt asks where they led, not the first URL again.
      h.redirect_url = std::move(followed);
      h.hops = hops;
      h.via_origin = std::move(via);
    }
    return step;
  }
  FetchStep step = InForce(h, rules, status);
  h.rules = std::move(rules);
  step.saved = Save(host, h, status, redirects, decoded.body);
  if (redirects > 0) {
    // The redirects passed another origin's robots.txt or ended at one.
    for (const std::string& origin : {via, RobotsOrigin(r.url, host)}) {
      if (!origin.empty() && origin != step.also_host) {
        ShareWithOrigin(host, origin, status, decoded.body, &step);
      }
    }
  }
  return step;
}

std::string RobotsGate::RobotsOrigin(const std::string& url, const std::string& host) {
  std::optional<url::Url> t = url::Parse(url);
  if (!t || t->path_and_query() != "/robots.txt" || t->origin_key() == host) return "";
  return std::string(t->origin_key());
}

// The redirects of `host`'s robots.txt passed or ended at `origin`'s robots.txt: when that
// origin has no rules in force, they are its rules too (it would only ask for the same file
// again). Not when the Crawl-delay is above the maximum: that origin then asks itself, and
// is given up with its own outcome. One origin at most (FetchStep::also_host).
void RobotsGate::ShareWithOrigin(const std::string& host, const std::string& origin, int status,
                                 const std::string& body, FetchStep* step) {
  if (!step->also_host.empty()) return;
  if (step->crawl_delay && *step->crawl_delay > options_.retry.max_crawl_delay) return;
  HostRobots& target = hosts_[origin];
  if (target.rules && !target.rules->temporary() && clock_->Now() < target.expiry) return;
  if (target.hops > 0) return;  // its own robots.txt request is under way
  target.rules = hosts_[host].rules;
  target.failures = 0;
  target.unreachable = 0;
  target.expiry = clock_->Now() + options_.ttl;
  step->also_host = origin;
  step->also_saved = Save(origin, target, status, 0, body);
}

std::optional<RobotsGate::FetchStep> RobotsGate::AdoptCached(const std::string& host, HostRobots& h,
                                                             const std::string& target) {
  std::optional<url::Url> t = url::Parse(target);
  if (!t || t->path_and_query() != "/robots.txt") return std::nullopt;
  const std::string origin(t->origin_key());
  if (origin == host) return std::nullopt;
  auto it = hosts_.find(origin);
  if (it == hosts_.end() || !it->second.rules || it->second.rules->temporary() ||
      clock_->Now() >= it->second.expiry) {
    return std::nullopt;
  }
  const HostRobots& other = it->second;
  std::optional<state::RobotsRecord> saved = db_ != nullptr ? db_->GetRobots(origin) : std::nullopt;
  if (db_ != nullptr && !saved) return std::nullopt;  // nothing to keep for a restart: ask
  const int redirects = h.hops + 1;
  h.redirect_url.clear();
  h.via_origin.clear();
  h.hops = 0;
  h.rules = other.rules;
  FetchStep step = InForce(h, *h.rules, saved ? saved->status : 200);
  h.expiry = std::min(h.expiry, other.expiry);  // due again with the copy it follows
  step.sitemaps.clear();                        // admitted with the other origin's robots.txt
  if (saved) {
    step.saved = Save(host, h, saved->status, std::max(redirects, saved->redirects), saved->body);
  }
  return step;
}

RobotsGate::FetchStep RobotsGate::Failure(const std::string& host, HostRobots& h, int status,
                                          int redirects, const fetch::FetchResult& r,
                                          robots::RobotsRules rules, const std::string& body) {
  const Clock::TimePoint now = clock_->Now();
  if (h.failures == 0) h.outage_since = now;
  ++h.failures;
  const bool unreachable = IsUnreachable(r);
  h.unreachable = unreachable ? h.unreachable + 1 : 0;
  const bool cached = h.rules && !h.rules->temporary();
  const Clock::Duration elapsed = now - h.outage_since;
  FetchStep step{.step = cached ? Step::kCached : Step::kRetry, .status = status};
  step.detail = "robots.txt: " + (status > 0 ? "HTTP " + std::to_string(status)
                                             : (GotResponse(r) ? std::string("undecodable body")
                                                               : FetchFailureDetail(r)));
  if (unreachable) {
    // Not an outage: the name does not resolve or nothing listens. Retried like a page.
    if (h.unreachable >= options_.retry.max_attempts) {
      step.step = Step::kUnreachable;
      step.detail += " (" + std::to_string(h.unreachable) + " attempts)";
    } else {
      step.retry_after = frontier::RetryBackoff(options_.retry, h.unreachable);
    }
  } else if (!cached && options_.patience.count() > 0 && elapsed >= options_.patience) {
    step.step = Step::kUnavailable;
    step.detail += " for " + FormatDuration(std::chrono::floor<std::chrono::seconds>(elapsed)) +
                   " (" + std::to_string(h.failures) + " attempts)";
  } else {
    step.retry_after = OutageRetryWait(options_.retry, h.failures, elapsed);
    if (!cached && options_.patience.count() > 0) {
      // The last attempt comes when the patience runs out, not a long wait after it.
      step.retry_after = std::min(
          step.retry_after, std::chrono::ceil<std::chrono::seconds>(options_.patience - elapsed));
    }
  }
  h.expiry = now + step.retry_after;
  if (cached) return step;  // the copy stays in force, and in the saved record
  h.rules = std::move(rules);
  step.saved = Save(host, h, status, redirects, body);
  return step;
}

RobotsGate::FetchStep RobotsGate::InForce(HostRobots& h, const robots::RobotsRules& rules,
                                          int status) {
  h.failures = 0;
  h.unreachable = 0;
  h.expiry = clock_->Now() + options_.ttl;
  return {.step = Step::kRules,
          .status = status,
          .crawl_delay = rules.CrawlDelay(options_.product_token),
          .sitemaps = rules.Sitemaps()};
}

std::optional<state::RobotsRecord> RobotsGate::Save(const std::string& host, const HostRobots& h,
                                                    int status, int redirects,
                                                    const std::string& body) {
  if (db_ == nullptr) return std::nullopt;
  using std::chrono::microseconds;
  const Clock::TimePoint now = clock_->Now();
  const int64_t wall_now = clock_->WallMicros();
  const auto left = std::chrono::duration_cast<microseconds>(h.expiry - now);
  const auto since = std::chrono::duration_cast<microseconds>(h.outage_since - now);
  const state::RobotsRecord record{.status = status,
                                   .redirects = redirects,
                                   .failures = h.failures,
                                   .expiry_us = wall_now + left.count(),
                                   .body = body,
                                   .outage_since_us = h.failures > 0 ? wall_now + since.count() : 0,
                                   .unreachable = h.unreachable};
  db_->PutRobots(host, record);
  return record;
}

}  // namespace harvest::crawl
