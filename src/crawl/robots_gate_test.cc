// RobotsGate: RFC 9309 §2.3.1 status handling, redirects, backoff and TTL, per host key.
#include "crawl/robots_gate.h"

#include <gtest/gtest.h>

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

TEST_F(RobotsGateTest, Rfc9309_5xxDisallowsAllAndBacksOffThenUnavailable) {
  RobotsGate gate = MakeGate();
  auto first = gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  EXPECT_EQ(first.step, RobotsGate::Step::kRetry);
  EXPECT_EQ(first.retry_after, 10s);
  EXPECT_EQ(first.detail, "robots.txt: HTTP 500");
  // Disallowed while waiting for the retry, then refetched.
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kDisallowed);
  clock_.Advance(10s);
  EXPECT_EQ(gate.Check(host_, "/x").gate, RobotsGate::Gate::kFetchRobots);
  auto second = gate.OnFetched(host_, Response(host_ + "/robots.txt", 503));
  EXPECT_EQ(second.retry_after, 20s);
  auto third = gate.OnFetched(host_, Response(host_ + "/robots.txt", 429));
  EXPECT_EQ(third.step, RobotsGate::Step::kUnavailable);
  EXPECT_EQ(third.detail, "robots.txt: HTTP 429 (3 attempts)");
}

TEST_F(RobotsGateTest, SuccessResetsTheFailureCount) {
  RobotsGate gate = MakeGate();
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 500));
  gate.OnFetched(host_, Response(host_ + "/robots.txt", 200, ""));
  EXPECT_EQ(gate.OnFetched(host_, Response(host_ + "/robots.txt", 500)).step,
            RobotsGate::Step::kRetry);
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
