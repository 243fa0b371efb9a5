#include "crawl/robots_gate.h"

#include "extract/extract.h"
#include "url/url.h"

namespace harvest::crawl {

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
}

RobotsGate::CheckResult RobotsGate::Check(const std::string& host,
                                          std::string_view path_and_query) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || !it->second.rules || clock_->Now() >= it->second.expiry) {
    return {.gate = Gate::kFetchRobots};
  }
  robots::MatchResult m = it->second.rules->Check(options_.product_token, path_and_query);
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
      h.redirect_url = std::move(*target);
      ++h.hops;
      return {.step = Step::kRedirect, .status = status};
    }
    redirects = robots::kMaxRedirects + 1;  // RFC 9309 §2.3.1.2: unavailable (allow all)
  }
  h.redirect_url.clear();
  h.hops = 0;
  extract::DecodeResult decoded =
      extract::DecodeContent(r.Header("content-encoding").value_or(""), r.body, kRobotsDecodeCap);
  // An undecodable 2xx is no robots.txt: treat it as unreachable and retry later. A body
  // over the cap decodes to its first kRobotsDecodeCap bytes, which is what is parsed.
  if (!decoded.ok && !decoded.too_large && status >= 200 && status < 300) status = 0;
  if (decoded.body.size() > kRobotsDecodeCap) decoded.body.resize(kRobotsDecodeCap);
  robots::RobotsRules rules = robots::FromFetch(status, decoded.body, redirects);
  FetchStep step = rules.temporary() ? Failure(h, status, r) : InForce(h, rules, status);
  h.rules = std::move(rules);
  Save(host, h, status, redirects, decoded.body);
  return step;
}

RobotsGate::FetchStep RobotsGate::Failure(HostRobots& h, int status, const fetch::FetchResult& r) {
  ++h.failures;
  FetchStep step{.step = Step::kRetry, .status = status};
  step.detail = "robots.txt: " + (status > 0 ? "HTTP " + std::to_string(status)
                                             : (GotResponse(r) ? std::string("undecodable body")
                                                               : FetchFailureDetail(r)));
  if (h.failures >= options_.retry.max_attempts) {
    step.step = Step::kUnavailable;
    step.detail += " (" + std::to_string(h.failures) + " attempts)";
    h.expiry = clock_->Now();
    return step;
  }
  step.retry_after = frontier::RetryBackoff(options_.retry, h.failures);
  h.expiry = clock_->Now() + step.retry_after;
  return step;
}

RobotsGate::FetchStep RobotsGate::InForce(HostRobots& h, const robots::RobotsRules& rules,
                                          int status) {
  h.failures = 0;
  h.expiry = clock_->Now() + options_.ttl;
  return {.step = Step::kRules,
          .status = status,
          .crawl_delay = rules.CrawlDelay(options_.product_token),
          .sitemaps = rules.Sitemaps()};
}

void RobotsGate::Save(const std::string& host, const HostRobots& h, int status, int redirects,
                      const std::string& body) {
  if (db_ == nullptr) return;
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(h.expiry - clock_->Now());
  db_->PutRobots(host, {.status = status,
                        .redirects = redirects,
                        .failures = h.failures,
                        .expiry_us = clock_->WallMicros() + left.count(),
                        .body = body});
}

}  // namespace harvest::crawl
