// RobotsGate: RFC 9309 §2.3.1 status handling, redirects, backoff and TTL, per host key.
#include "crawl/robots_gate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "state/internal.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;

fetch::FetchResult Response(std::string url, int status, std::string body = "",
                            std::vector<std::pair<std::string, std::string>> headers = {}) {
  fetch::FetchResult r;
  r.url = std::move(url);
  r.outcome = fetch::FetchOutcome::kOk;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

class RobotsGateTest : public ::testing::Test {
 protected:
  RobotsGate MakeGate() {
    RobotsGate::Options o;
    o.product_token = "harvest";
    o.ttl = 3600s;
    o.retry.max_attempts = 3;
    o.retry.backoff = {10s, 20s};
    return RobotsGate(o, &clock_, nullptr);
  }
  FakeClock clock_;
  const std::string host_ = "http://a.test";
};

TEST_F(RobotsGateTest, NoRulesMeansFetchRobotsFirst) {
  RobotsGate gate = MakeGate();
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kFetchRobots);
  EXPECT_EQ(gate.RobotsUrl(host_), "http://a.test/robots.txt");
  EXPECT_EQ(gate.RobotsUrl("https://a.test:8443"), "https://a.test:8443/robots.txt");
}

TEST_F(RobotsGateTest, Rfc9309_2xxRulesInForceUntilTheTtl) {
  RobotsGate gate = MakeGate();
  auto step = gate.OnFetched(
      host_,
      Response(host_ + "/robots.txt", 200,
               "User-agent: *\nDisallow: /no\nCrawl-delay: 2\nSitemap: http://a.test/s.xml\n"));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);
  ASSERT_TRUE(step.crawl_delay.has_value());
  EXPECT_EQ(*step.crawl_delay, 2000ms);
  EXPECT_EQ(step.sitemaps, std::vector<std::string>{"http://a.test/s.xml"});
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kAllowed);
  RobotsGate::CheckResult no = gate.Check(host_, "/no/x");
  EXPECT_EQ(no.gate, RobotsGate::Gate::kDisallowed);
  EXPECT_EQ(no.detail, "Disallow: /no (robots.txt line 2)");
  // Another host key (another port) is not covered by these rules.
  EXPECT_EQ(gate.Check("http://a.test:8080", "/no/x").gate, RobotsGate::Gate::kFetchRobots);
  clock_.Advance(3600s);
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kFetchRobots);
}

TEST_F(RobotsGateTest, Rfc9309_4xxAllowsAll) {
  RobotsGate gate = MakeGate();
  EXPECT_EQ(gate.OnFetched(host_, Response(host_ + "/robots.txt", 404)).step,
            RobotsGate::Step::kRules);
  EXPECT_EQ(gate.Check(host_, "/anything").gate, RobotsGate::Gate::kAllowed);
}

TEST_F(RobotsGateTest, Rfc9309_5xxDisallowsAllAndBacksOff) {
  RobotsGate gate = MakeGate();
  auto first = gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  EXPECT_EQ(first.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(first.retry_after, 10s);
  EXPECT_EQ(first.detail, "robots.txt: HTTP 500");
  // Nothing is requested while waiting for the retry (the URL waits, it is not disallowed
  // for good), then robots.txt is fetched again.
  RobotsGate::CheckResult waiting = gate.Check(host_, "/x");
  EXPECT_EQ(waiting.gate, RobotsGate::Gate::kWait);
  EXPECT_EQ(waiting.wait, 10s);
  clock_.Advance(10s);
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kFetchRobots);
  auto second = gate.OnFetched(host_, Response(host_ + "/robots.txt", 503));
  EXPECT_EQ(second.retry_after, 20s);
  // max_attempts does not end an outage: only the patience does.
  auto third = gate.OnFetched(host_, Response(host_ + "/robots.txt", 429));
  EXPECT_EQ(third.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(third.detail, "robots.txt: HTTP 429");
}

// Fails robots.txt with `answer` at each due time until the gate gives up or `horizon`
// passes; returns the steps with the outage time at which each came.
struct Attempt {
  Clock::Duration elapsed;
  RobotsGate::FetchStep step;
};
std::vector<Attempt> FailUntil(RobotsGate& gate, FakeClock& clock, const std::string& host,
                               const fetch::FetchResult& answer, Clock::Duration horizon) {
  std::vector<Attempt> out;
  const Clock::TimePoint start = clock.Now();
  while (clock.Now() - start <= horizon) {
    EXPECT_EQ(gate.Check(host, "/x").gate, RobotsGate::Gate::kFetchRobots);
    RobotsGate::FetchStep step = gate.OnFetched(host, answer);
    out.push_back({clock.Now() - start, step});
    if (step.step != RobotsGate::Step::kRetry && step.step != RobotsGate::Step::kCached) break;
    if (step.step == RobotsGate::Step::kRetry && step.retry_after > 0s) {
      EXPECT_EQ(gate.Check(host, "/x").gate, RobotsGate::Gate::kWait);  // never disallowed
    }
    clock.Advance(step.retry_after);
  }
  return out;
}

TEST_F(RobotsGateTest, Rfc9309_OutageScheduleFiveMinutesApartThenDoublingToSixHours) {
  RobotsGate::Options o;
  o.product_token = "harvest";
  o.patience = 0s;  // never give up: the schedule runs on
  o.retry.backoff = {30s, 120s, 300s};
  RobotsGate gate(o, &clock_, nullptr);
  const std::vector<Attempt> attempts =
      FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 503), 72h);
  ASSERT_GT(attempts.size(), 20u);
  std::vector<std::chrono::seconds> late;  // the waits after the first 30 minutes
  for (const Attempt& a : attempts) {
    ASSERT_EQ(a.step.step, RobotsGate::Step::kRetry);  // patience 0: never unavailable
    EXPECT_LE(a.step.retry_after, 6h);
    if (a.elapsed + 30s < 30min) {  // the outage began 30 s before FailUntil
      EXPECT_LE(a.step.retry_after, 5min) << "at " << a.elapsed.count();
    } else {
      late.push_back(a.step.retry_after);
    }
  }
  // The backoff's first entries, capped at 5 min: 30 s, 2 min, 5 min, 5 min, ...
  EXPECT_EQ(attempts[0].step.retry_after, 30s);
  EXPECT_EQ(attempts[1].step.retry_after, 120s);
  EXPECT_EQ(attempts[2].step.retry_after, 300s);
  EXPECT_EQ(attempts[3].step.retry_after, 300s);
  // Then doubling (the first attempt past 30 min comes at 32.5 min: 7.5 min) up to 6 h.
  ASSERT_GE(late.size(), 8u);
  EXPECT_EQ(late[0], 450s);
  for (size_t i = 1; i < late.size(); ++i) {
    EXPECT_EQ(late[i], std::min<std::chrono::seconds>(2 * late[i - 1], 6h)) << i;
  }
  EXPECT_EQ(late.back(), 6h);
}

TEST_F(RobotsGateTest, OutageRetryWaitAlone) {
  frontier::FrontierOptions retry;
  retry.backoff = {30s, 120s, 600s};
  EXPECT_EQ(OutageRetryWait(retry, 1, 0s), 30s);
  EXPECT_EQ(OutageRetryWait(retry, 3, 10min), 5min);  // 600 s capped
  EXPECT_EQ(OutageRetryWait(retry, 9, 29min), 5min);
  EXPECT_EQ(OutageRetryWait(retry, 9, 30min), 5min);
  EXPECT_EQ(OutageRetryWait(retry, 9, 35min), 10min);
  EXPECT_EQ(OutageRetryWait(retry, 9, 45min), 20min);
  EXPECT_EQ(OutageRetryWait(retry, 9, 24h), 6h);
}

TEST_F(RobotsGateTest, Rfc9309_PatienceRunsOutThenTheHostIsUnavailable) {
  RobotsGate::Options o;
  o.product_token = "harvest";
  o.retry.backoff = {30s, 120s, 300s};
  o.retry.max_attempts = 3;
  ASSERT_EQ(o.patience, 1800s);  // the default
  RobotsGate gate(o, &clock_, nullptr);
  const std::vector<Attempt> attempts =
      FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 503), 72h);
  ASSERT_GE(attempts.size(), 2u);
  const Attempt& last = attempts.back();
  EXPECT_EQ(last.step.step, RobotsGate::Step::kUnavailable);
  // The last attempt comes when the patience runs out: 0, 0.5, 2.5, 7.5, ... 27.5, 30 min.
  EXPECT_EQ(last.elapsed, 30min);
  EXPECT_EQ(attempts.size(), 9u);
  EXPECT_EQ(last.step.detail, "robots.txt: HTTP 503 for 30m (9 attempts)");
  for (size_t i = 0; i + 1 < attempts.size(); ++i) {
    EXPECT_EQ(attempts[i].step.step, RobotsGate::Step::kRetry) << i;
  }
}

TEST_F(RobotsGateTest, Rfc9309_FailedRefetchKeepsTheCachedCopy) {
  RobotsGate gate = MakeGate();  // ttl 1 h, backoff 10 s, 20 s, patience 30 min
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, "User-agent: *\nDisallow: /no\n"));
  clock_.Advance(3600s);
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kFetchRobots);
  auto step = gate.OnFetched(host_, Response(host_ + "/robots.txt", 503));
  EXPECT_EQ(step.step, RobotsGate::Step::kCached);
  EXPECT_EQ(step.retry_after, 10s);
  EXPECT_EQ(step.detail, "robots.txt: HTTP 503");
  // The copy stays in force until the next attempt is due.
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kAllowed);
  EXPECT_EQ(gate.Check(host_, "/no/x").gate, RobotsGate::Gate::kDisallowed);
  clock_.Advance(10s);
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kFetchRobots);
  fetch::FetchResult timeout;
  timeout.url = host_ + "/robots.txt";
  timeout.outcome = fetch::FetchOutcome::kTimeout;
  timeout.error = "Operation timed out";
  EXPECT_EQ(gate.OnFetched(host_, timeout).step, RobotsGate::Step::kCached);
  EXPECT_EQ(gate.Check(host_, "/no/x").gate, RobotsGate::Gate::kDisallowed);
  // Far past the patience: with a copy the host is never given up, and the schedule holds.
  clock_.Advance(20s);
  const std::vector<Attempt> attempts =
      FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 500), 48h);
  for (const Attempt& a : attempts) {
    ASSERT_EQ(a.step.step, RobotsGate::Step::kCached);
    EXPECT_LE(a.step.retry_after, 6h);
    if (a.elapsed + 30s < 30min) {  // the outage began 30 s before FailUntil
      EXPECT_LE(a.step.retry_after, 5min);
    }
  }
  EXPECT_EQ(attempts.back().step.retry_after, 6h);
  EXPECT_EQ(gate.OnFetched(host_, Response(host_ + "/robots.txt", 502)).step,
            RobotsGate::Step::kCached);
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kAllowed);
  EXPECT_EQ(gate.Check(host_, "/no/x").gate, RobotsGate::Gate::kDisallowed);
  // A new copy replaces it.
  clock_.Advance(6h);
  EXPECT_EQ(gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, "User-agent: *\n")).step,
            RobotsGate::Step::kRules);
  EXPECT_EQ(gate.Check(host_, "/no/x").gate, RobotsGate::Gate::kAllowed);
}

fetch::FetchResult TransportError(std::string url, fetch::FetchOutcome outcome,
                                  std::string message) {
  fetch::FetchResult r;
  r.url = std::move(url);
  r.outcome = outcome;
  r.error = std::move(message);
  return r;
}

TEST_F(RobotsGateTest, DnsAndConnectionFailuresFollowThePageScheduleThenGiveUp) {
  RobotsGate gate = MakeGate();  // backoff 10 s, 20 s; max_attempts 3
  const std::string url = host_ + "/robots.txt";
  auto dns = TransportError(url, fetch::FetchOutcome::kDnsError, "Could not resolve host");
  auto refused = TransportError(url, fetch::FetchOutcome::kConnectError, "Connection refused");
  auto first = gate.OnFetched(host_, dns);
  EXPECT_EQ(first.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(first.retry_after, 10s);
  clock_.Advance(10s);
  auto second = gate.OnFetched(host_, refused);
  EXPECT_EQ(second.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(second.retry_after, 20s);
  clock_.Advance(20s);
  auto third = gate.OnFetched(host_, dns);
  EXPECT_EQ(third.step, RobotsGate::Step::kUnreachable);
  EXPECT_EQ(third.detail, "robots.txt: dns_error: Could not resolve host (3 attempts)");
}

TEST_F(RobotsGateTest, AnAnswerBetweenDnsFailuresRestartsTheirCount) {
  RobotsGate gate = MakeGate();
  const std::string url = host_ + "/robots.txt";
  auto dns = TransportError(url, fetch::FetchOutcome::kDnsError, "Could not resolve host");
  gate.OnFetched(host_, dns);
  gate.OnFetched(host_, dns);
  EXPECT_EQ(gate.OnFetched(host_, Response(url, 503)).step, RobotsGate::Step::kRetry);
  auto again = gate.OnFetched(host_, dns);
  EXPECT_EQ(again.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(again.retry_after, 10s);  // the first of a new series
}

TEST_F(RobotsGateTest, DnsFailuresGiveUpAHostWithACachedCopyToo) {
  RobotsGate gate = MakeGate();
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, "User-agent: *\nDisallow: /no\n"));
  clock_.Advance(3600s);
  auto refused = TransportError(host_ + "/robots.txt", fetch::FetchOutcome::kConnectError,
                                "Connection refused");
  auto first = gate.OnFetched(host_, refused);
  EXPECT_EQ(first.step, RobotsGate::Step::kCached);
  EXPECT_EQ(first.retry_after, 10s);
  EXPECT_EQ(gate.OnFetched(host_, refused).step, RobotsGate::Step::kCached);
  auto third = gate.OnFetched(host_, refused);
  EXPECT_EQ(third.step, RobotsGate::Step::kUnreachable);
  EXPECT_EQ(third.detail, "robots.txt: connect_error: Connection refused (3 attempts)");
}

TEST_F(RobotsGateTest, SuccessResetsTheFailureCount) {
  RobotsGate gate = MakeGate();
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, ""));
  // A new outage (over the cached copy): its first wait again.
  auto step = gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  EXPECT_EQ(step.step, RobotsGate::Step::kCached);
  EXPECT_EQ(step.retry_after, 10s);
}

TEST_F(RobotsGateTest, UnreachableNamesTheTransportError) {
  RobotsGate gate = MakeGate();
  fetch::FetchResult r;
  r.url = host_ + "/robots.txt";
  r.outcome = fetch::FetchOutcome::kTimeout;
  r.error = "Operation timed out";
  EXPECT_EQ(gate.OnFetched(host_, r).detail, "robots.txt: timeout: Operation timed out");
}

TEST_F(RobotsGateTest, Rfc9309_RedirectsFollowedUpToFiveHops) {
  RobotsGate gate = MakeGate();
  std::string at = host_ + "/robots.txt";
  for (int hop = 1; hop <= 5; ++hop) {
    const std::string next = host_ + "/r" + std::to_string(hop);
    auto step = gate.OnFetched(host_, Response(at, 301, "", {{"Location", next}}));
    ASSERT_EQ(step.step, RobotsGate::Step::kRedirect) << hop;
    EXPECT_EQ(gate.RobotsUrl(host_), next);
    at = next;
  }
  // The sixth: unavailable, which allows all (RFC 9309 §2.3.1.2).
  auto step = gate.OnFetched(host_, Response(at, 301, "", {{"Location", host_ + "/r6"}}));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kAllowed);
  EXPECT_EQ(gate.RobotsUrl(host_), host_ + "/robots.txt");
}

TEST_F(RobotsGateTest, OnlyTheFirst500KiBAreParsed) {
  RobotsGate gate = MakeGate();
  std::string body = "User-agent: *\n" + std::string(kRobotsDecodeCap, '#') + "\nDisallow: /\n";
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, body));
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kAllowed);
}

TEST_F(RobotsGateTest, TheOutageSurvivesARestart) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("harvest_robots_gate_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir, .sync = false});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  RobotsGate::Options o;
  o.product_token = "harvest";
  o.retry.backoff = {30s, 120s, 300s};
  const int64_t outage_start = clock_.WallMicros();
  {
    RobotsGate gate(o, &clock_, db->get());
    std::vector<Attempt> attempts =
        FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 503), 20min);
    ASSERT_EQ(attempts.back().step.step, RobotsGate::Step::kRetry);
  }
  ASSERT_TRUE((*db)->Commit().ok());
  std::optional<state::RobotsRecord> saved = (*db)->GetRobots(host_);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->status, 503);
  EXPECT_EQ(saved->failures, 6);  // at 0, 0.5, 2.5, 7.5, 12.5 and 17.5 min
  EXPECT_EQ(saved->outage_since_us, outage_start);
  EXPECT_EQ(saved->expiry_us, clock_.WallMicros());  // the next attempt: now, at 22.5 min
  // A new process: the outage goes on from where it was, not from the restart.
  RobotsGate gate(o, &clock_, nullptr);
  gate.Restore(host_, *saved);
  std::vector<Attempt> attempts =
      FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 503), 72h);
  EXPECT_EQ(attempts.size(), 3u);  // at 22.5, 27.5 and 30 min
  EXPECT_EQ(attempts.back().step.detail, "robots.txt: HTTP 503 for 30m (9 attempts)");
  db->reset();
  std::filesystem::remove_all(dir);
}

// FetchStep::saved is the record written to the crawl state (a shared crawl shares it with
// the capture): rules fetched and a first failure save one; a failed refetch while a cached
// copy stays in force saves none; without a crawl state nothing is saved.
TEST_F(RobotsGateTest, AFetchReturnsTheRecordItSaved) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("harvest_robots_gate_saved_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir, .sync = false});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  RobotsGate::Options o;
  o.product_token = "harvest";
  o.ttl = 3600s;
  {
    RobotsGate gate(o, &clock_, db->get());
    RobotsGate::FetchStep rules = gate.OnFetched(
        host_, Response(host_ + "/robots.txt", 200, "User-agent: *\nDisallow: /no\n"));
    ASSERT_TRUE(rules.saved.has_value());
    EXPECT_EQ(rules.saved->status, 200);
    EXPECT_EQ(rules.saved->body, "User-agent: *\nDisallow: /no\n");
    EXPECT_EQ(rules.saved->expiry_us, clock_.WallMicros() + 3600'000'000);
    ASSERT_TRUE((*db)->Commit().ok());
    std::optional<state::RobotsRecord> stored = (*db)->GetRobots(host_);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->body, rules.saved->body);
    clock_.Advance(3600s);
    RobotsGate::FetchStep cached = gate.OnFetched(host_, Response(host_ + "/robots.txt", 503));
    EXPECT_EQ(cached.step, RobotsGate::Step::kCached);
    EXPECT_FALSE(cached.saved.has_value());
    RobotsGate::FetchStep first =
        gate.OnFetched("http://b.test", Response("http://b.test/robots.txt", 503));
    EXPECT_EQ(first.step, RobotsGate::Step::kRetry);
    ASSERT_TRUE(first.saved.has_value());
    EXPECT_EQ(first.saved->status, 503);
    EXPECT_EQ(first.saved->failures, 1);
  }
  RobotsGate stateless = MakeGate();
  EXPECT_FALSE(
      stateless.OnFetched(host_, Response(host_ + "/robots.txt", 200, "")).saved.has_value());
  db->reset();
  std::filesystem::remove_all(dir);
}

TEST_F(RobotsGateTest, ARecordWithoutTheOutageFieldsStartsTheOutageAtTheRestart) {
  // What an older version wrote: status, redirects, failures, expiry, body — nothing after.
  std::string old;
  state::PutSignedVarint(&old, 503);
  state::PutSignedVarint(&old, 0);
  state::PutSignedVarint(&old, 2);
  state::PutSignedVarint(&old, clock_.WallMicros());
  state::PutBytes(&old, "");
  state::RobotsRecord record;
  record.outage_since_us = 99;
  ASSERT_TRUE(state::DecodeRobots(old, &record));
  EXPECT_EQ(record.failures, 2);
  EXPECT_EQ(record.outage_since_us, 0);
  EXPECT_EQ(record.unreachable, 0);
  // And the current layout round-trips.
  state::RobotsRecord now{.status = 503,
                          .failures = 4,
                          .expiry_us = 5,
                          .body = "x",
                          .outage_since_us = 1234567,
                          .unreachable = 2};
  state::RobotsRecord back;
  ASSERT_TRUE(state::DecodeRobots(state::EncodeRobots(now), &back));
  EXPECT_EQ(back.outage_since_us, 1234567);
  EXPECT_EQ(back.unreachable, 2);
  EXPECT_EQ(back.body, "x");

  RobotsGate::Options o;
  o.product_token = "harvest";
  o.patience = 600s;
  o.retry.backoff = {30s, 120s, 300s};
  RobotsGate gate(o, &clock_, nullptr);
  gate.Restore(host_, record);
  std::vector<Attempt> attempts =
      FailUntil(gate, clock_, host_, Response(host_ + "/robots.txt", 503), 72h);
  EXPECT_EQ(attempts.back().step.step, RobotsGate::Step::kUnavailable);
  EXPECT_EQ(attempts.back().elapsed, 600s);  // a full patience from the restart
}

TEST_F(RobotsGateTest, RestoreKeepsRulesAndExpiry) {
  RobotsGate gate = MakeGate();
  gate.Restore(host_, {.status = 200,
                       .redirects = 0,
                       .failures = 0,
                       .expiry_us = clock_.WallMicros() + 60'000'000,
                       .body = "User-agent: *\nDisallow: /\n"});
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kDisallowed);
  clock_.Advance(61s);
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kFetchRobots);
}

}  // namespace
}  // namespace harvest::crawl

namespace harvest::crawl {
namespace {

// http://h/robots.txt -> 301 -> https://h/robots.txt, the https copy already in force: the
// http origin takes those rules without asking again; an uncached target is followed.
TEST_F(RobotsGateTest, ARedirectToAnotherOriginsCachedRobotsTxtIsNotFetchedAgain) {
  RobotsGate gate = MakeGate();
  const std::string https = "https://a.test";
  gate.OnFetched(https, Response(https + "/robots.txt", 200,
                                 "User-agent: *\nDisallow: /no\nCrawl-delay: 2\n"
                                 "Sitemap: https://a.test/s.xml\n"));
  RobotsGate::FetchStep step = gate.OnFetched(
      host_, Response(host_ + "/robots.txt", 301, "", {{"Location", "https://a.test/robots.txt"}}));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);
  ASSERT_TRUE(step.crawl_delay.has_value());
  EXPECT_EQ(*step.crawl_delay, 2000ms);
  EXPECT_TRUE(step.sitemaps.empty());  // admitted with the https robots.txt
  EXPECT_EQ(gate.Check(host_, "/no/x").gate, RobotsGate::Gate::kDisallowed);
  EXPECT_EQ(gate.Check(host_, "/yes").gate, RobotsGate::Gate::kAllowed);
  EXPECT_EQ(gate.RobotsUrl(host_), host_ + "/robots.txt");
  // Another origin whose robots.txt is not known yet: the redirect is followed.
  const std::string other = "http://b.test";
  step = gate.OnFetched(
      other, Response(other + "/robots.txt", 301, "", {{"Location", "https://b.test/robots.txt"}}));
  EXPECT_EQ(step.step, RobotsGate::Step::kRedirect);
  EXPECT_EQ(gate.RobotsUrl(other), "https://b.test/robots.txt");
  // Where it ends, that origin takes the same rules: it would only ask for the same file.
  step = gate.OnFetched(other, Response("https://b.test/robots.txt", 200,
                                        "User-agent: *\nDisallow: /b\nCrawl-delay: 3\n"));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);
  EXPECT_EQ(step.also_host, "https://b.test");
  EXPECT_EQ(gate.Check("https://b.test", "/b/1").gate, RobotsGate::Gate::kDisallowed);
  EXPECT_EQ(gate.Check(other, "/b/1").gate, RobotsGate::Gate::kDisallowed);
  // An origin with rules of its own keeps them.
  step = gate.OnFetched("http://c.test", Response("http://c.test/robots.txt", 301, "",
                                                  {{"Location", "https://a.test/robots.txt"}}));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);  // a.test's copy, taken
  EXPECT_EQ(step.also_host, "");
  // A copy that is due again is not taken either.
  clock_.Advance(3601s);
  step = gate.OnFetched(
      host_, Response(host_ + "/robots.txt", 301, "", {{"Location", "https://a.test/robots.txt"}}));
  EXPECT_EQ(step.step, RobotsGate::Step::kRedirect);
}

// A failure reached through permanent redirects is tried again where they led: the
// http:// robots.txt that moved to https:// is not asked again on every retry.
TEST_F(RobotsGateTest, AFailureAfterPermanentRedirectsIsRetriedWhereTheyLed) {
  RobotsGate gate = MakeGate();
  const std::string https_robots = "https://a.test/robots.txt";
  auto step =
      gate.OnFetched(host_, Response(host_ + "/robots.txt", 301, "", {{"Location", https_robots}}));
  ASSERT_EQ(step.step, RobotsGate::Step::kRedirect);
  step = gate.OnFetched(host_, Response(https_robots, 503));
  EXPECT_EQ(step.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(gate.RobotsUrl(host_), https_robots);
  EXPECT_TRUE(gate.FollowingRedirects(host_));
  clock_.Advance(step.retry_after);
  step = gate.OnFetched(host_, Response(https_robots, 200, "User-agent: *\nDisallow: /x\n"));
  EXPECT_EQ(step.step, RobotsGate::Step::kRules);
  EXPECT_EQ(step.also_host, "https://a.test");
  EXPECT_FALSE(gate.FollowingRedirects(host_));
  EXPECT_EQ(gate.RobotsUrl(host_), host_ + "/robots.txt");
  // A temporary redirect is not remembered: the retry starts over.
  const std::string b = "http://b.test";
  step =
      gate.OnFetched(b, Response(b + "/robots.txt", 302, "", {{"Location", "https://b.test/r"}}));
  ASSERT_EQ(step.step, RobotsGate::Step::kRedirect);
  step = gate.OnFetched(b, Response("https://b.test/r", 503));
  EXPECT_EQ(step.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(gate.RobotsUrl(b), b + "/robots.txt");
}

}  // namespace
}  // namespace harvest::crawl
