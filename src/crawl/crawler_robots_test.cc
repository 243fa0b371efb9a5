// The crawler as a unit, robots.txt over time (RFC 9309 §2.3.1.4, §2.4): outages of a host
// without a cached copy (the outage schedule, the patience), refetches after the TTL that
// fail (the cached copy stays), and DNS failures (the page retry schedule, then gave-up).
// In-process on a FakeFetcher and a FakeClock, like crawler_test.cc; the crawl loop moves
// simulated time at most 100 ms per turn, so 30 simulated minutes take about 18 000 turns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using crawler_test_util::OutcomeLine;
using fetch::FetchOutcome;
using fetch::testing::FakeFetcher;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

constexpr char kRobots[] = "http://a.test/robots.txt";

// Helpers shared with crawler_test.cc: crawler_test_fixture.h.
class CrawlerRobotsTest : public crawler_test_util::CrawlerTestBase {
 protected:
  void SetUp() override {
    CrawlerTestBase::SetUp();
    start_ = clock_.Now();
  }

  // The last outcome recorded for `url` ("" when none).
  OutcomeLine OutcomeOf(const std::string& url) const {
    OutcomeLine found;
    for (const OutcomeLine& o : Outcomes()) {
      if (o.url == url) found = o;
    }
    return found;
  }
  // robots.txt attempts of an outage: at most 5 minutes apart (plus the host's delay and a
  // request's latency) during its first 30 minutes.
  void ExpectOutageSchedule(const std::vector<FakeRequestLog>& tries) const {
    ASSERT_FALSE(tries.empty());
    for (size_t i = 1; i < tries.size(); ++i) {
      if (tries[i - 1].end - tries.front().end >= 30min) break;
      EXPECT_LE(tries[i].start - tries[i - 1].end, 5min + 1s) << "attempt " << i;
    }
  }
  // A site of `n` pages linked from its home page.
  void ScriptSite(int n) {
    std::vector<std::string> hrefs;
    for (int i = 0; i < n; ++i) hrefs.push_back("/p" + std::to_string(i));
    fetcher_->Script("http://a.test/", FakeResponse::Html(Links(hrefs)));
    for (int i = 0; i < n; ++i) {
      fetcher_->Script("http://a.test/p" + std::to_string(i),
                       FakeResponse::Html("page " + std::to_string(i)));
    }
  }
  Clock::Duration Since(Clock::TimePoint t) const { return t - start_; }

  Clock::TimePoint start_{};
};

// (a) A host whose robots.txt answers 503 for 6 minutes is crawled in full once it answers.
TEST_F(CrawlerRobotsTest, Rfc9309_ShortOutageThenTheHostIsCrawledInFull) {
  fetcher_->Respond(kRobots, [this](const fetch::FetchRequest&) {
    if (Since(clock_.Now()) < 6min) return FakeResponse::WithStatus(503);
    return FakeResponse::Text("User-agent: *\nAllow: /\n");
  });
  ScriptSite(10);
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_TRUE(s.hosts_given_up.empty());
  const std::vector<FakeRequestLog> tries = RequestsOf(kRobots);
  ASSERT_EQ(tries.size(), 4u);  // at 0, 0.5, 2.5 and 7.5 min
  ExpectOutageSchedule(tries);
  EXPECT_EQ(tries.back().status, 200);
  EXPECT_GE(Since(tries.back().start), 6min);
  // No page before robots.txt answered; then every page, once.
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.url != kRobots) {
      EXPECT_GE(r.start, tries.back().end) << r.url;
    }
  }
  std::vector<std::string> pages = {"http://a.test/"};
  for (int i = 0; i < 10; ++i) pages.push_back("http://a.test/p" + std::to_string(i));
  for (const std::string& u : pages) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
    EXPECT_EQ(OutcomeOf(u).outcome, "fetched") << u;
  }
  // Every attempt is stored; the 503s after the first, with the same empty body, as
  // revisits of it (an empty payload is a revisit of the same URL's, WarcSink).
  std::vector<std::string> robots_outcomes;
  for (const OutcomeLine& o : Outcomes()) {
    if (o.url == kRobots) {
      robots_outcomes.push_back(o.outcome);
    } else {
      EXPECT_EQ(o.outcome, "fetched") << o.url << ": " << o.detail;
    }
  }
  EXPECT_EQ(robots_outcomes,
            (std::vector<std::string>{"fetched", "revisit", "revisit", "fetched"}));
  EXPECT_EQ(s.disallowed, 0u);
  ExpectPolite(1s);
}

// (b) A name that does not resolve is no outage: the page retry schedule, then gave-up.
TEST_F(CrawlerRobotsTest, RobotsDnsFailureGivesTheHostUpAfterThePageSchedule) {
  fetcher_->Script(kRobots, FakeResponse::Error(FetchOutcome::kDnsError, "Could not resolve host"));
  CrawlStats s = Crawl(Options(), {"http://a.test/", "http://a.test/other"});
  const std::vector<FakeRequestLog> tries = RequestsOf(kRobots);
  ASSERT_EQ(tries.size(), 3u);  // max_attempts
  EXPECT_GE(tries[1].start - tries[0].end, 30s);
  EXPECT_LE(tries[1].start - tries[0].end, 32s);
  EXPECT_GE(tries[2].start - tries[1].end, 120s);
  EXPECT_LE(tries[2].start - tries[1].end, 122s);
  EXPECT_EQ(fetcher_->log().size(), 3u);  // no page was requested
  for (const char* u : {"http://a.test/", "http://a.test/other"}) {
    const OutcomeLine o = OutcomeOf(u);
    EXPECT_EQ(o.outcome, "gave-up") << u;
    EXPECT_EQ(o.detail, "robots.txt: dns_error: Could not resolve host (3 attempts)") << u;
  }
  ASSERT_EQ(s.hosts_given_up.count("gave-up"), 1u);
  EXPECT_EQ(s.hosts_given_up.at("gave-up").hosts, 1u);
  EXPECT_EQ(s.hosts_given_up.count("robots-unavailable"), 0u);
  EXPECT_TRUE(s.complete);
}

// (c) robots.txt is refetched after its TTL in the host's slot; a failing refetch keeps the
// cached rules: disallowed paths stay disallowed, allowed pages are still fetched.
TEST_F(CrawlerRobotsTest, Rfc9309_FailedRefetchAfterTheTtlKeepsTheCachedRules) {
  CrawlOptions o = Options();
  o.robots_ttl = 10min;
  o.frontier.default_delay = 60s;
  o.frontier.breaker_window = 0;  // the failing refetches must not pause the host here
  int robots_requests = 0;
  fetcher_->Respond(kRobots, [&](const fetch::FetchRequest&) {
    if (robots_requests++ == 0) return FakeResponse::Text("User-agent: *\nDisallow: /private\n");
    FakeResponse down = FakeResponse::WithStatus(503);
    if (robots_requests % 2 == 0) down = FakeResponse::Error(FetchOutcome::kTimeout, "timed out");
    return down;
  });
  std::vector<std::string> hrefs = {"/private/a"};
  for (int i = 0; i < 20; ++i) hrefs.push_back("/p" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(hrefs)));
  for (int i = 0; i < 20; ++i) {
    fetcher_->Script("http://a.test/p" + std::to_string(i),
                     FakeResponse::Html("page " + std::to_string(i)));
  }
  // Found after the refetches began to fail.
  fetcher_->Script("http://a.test/p17", FakeResponse::Html(Links({"/private/late", "/late"})));
  fetcher_->Script("http://a.test/late", FakeResponse::Html("late"));
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_TRUE(s.hosts_given_up.empty());

  const std::vector<FakeRequestLog> tries = RequestsOf(kRobots);
  ASSERT_GE(tries.size(), 3u);  // the first fetch and at least two failed refetches
  EXPECT_GE(tries[1].start - tries[0].end, 10min);  // not before the TTL
  EXPECT_LE(tries[1].start - tries[0].end, 10min + 61s);
  for (size_t i = 2; i < tries.size(); ++i) {
    EXPECT_GE(tries[i].start - tries[i - 1].end, 30s) << i;  // the outage schedule
    EXPECT_LE(tries[i].start - tries[i - 1].end, 5min + 61s) << i;
  }
  const FakeRequestLog late = RequestsOf("http://a.test/p17").at(0);
  EXPECT_GT(late.start, tries[2].end);  // p17 came after two failed refetches
  for (const char* u : {"http://a.test/private/a", "http://a.test/private/late"}) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 0u) << u;
    const OutcomeLine out = OutcomeOf(u);
    EXPECT_EQ(out.outcome, "disallowed") << u;
    EXPECT_EQ(out.detail, "Disallow: /private (robots.txt line 2)") << u;
  }
  for (int i = 0; i < 20; ++i) {
    const std::string u = "http://a.test/p" + std::to_string(i);
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
    EXPECT_EQ(OutcomeOf(u).outcome, "fetched") << u;
  }
  EXPECT_EQ(OutcomeOf("http://a.test/late").outcome, "fetched");
  ExpectPolite(60s);
}

// (d) One shot, default patience: 503 forever gives the host up after 30 minutes of outage,
// with the cause and the time in the detail.
TEST_F(CrawlerRobotsTest, Rfc9309_PatienceRunsOutThenRobotsUnavailable) {
  fetcher_->Script(kRobots, FakeResponse::WithStatus(503));
  CrawlOptions o = Options();
  ASSERT_EQ(o.robots_patience, 30min);  // the default
  CrawlStats s = Crawl(o, {"http://a.test/", "http://a.test/other"});
  EXPECT_TRUE(s.complete);
  const std::vector<FakeRequestLog> tries = RequestsOf(kRobots);
  ASSERT_EQ(tries.size(), 9u);  // at 0, 0.5, 2.5, 7.5, 12.5, 17.5, 22.5, 27.5 and 30 min
  ExpectOutageSchedule(tries);
  EXPECT_GE(tries.back().end - tries.front().end, 30min);
  EXPECT_LE(tries.back().end - tries.front().end, 30min + 2s);
  EXPECT_EQ(fetcher_->log().size(), tries.size());  // no page was requested
  for (const char* u : {"http://a.test/", "http://a.test/other"}) {
    const OutcomeLine out = OutcomeOf(u);
    EXPECT_EQ(out.outcome, "robots-unavailable") << u;
    EXPECT_EQ(out.detail, "robots.txt: HTTP 503 for 30m (9 attempts)") << u;
  }
  EXPECT_EQ(s.hosts_given_up.at("robots-unavailable").hosts, 1u);
  ExpectPolite(1s);
}

// The outage's start survives a restart: stopped 20 minutes into it, the next run gives the
// host up 30 minutes after the outage began, not 30 minutes after the restart.
TEST_F(CrawlerRobotsTest, TheOutageStartSurvivesARestart) {
  fetcher_->Script(kRobots, FakeResponse::WithStatus(503));
  {
    Crawler crawler(Options(), &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (Since(r.end) >= 20min) crawler.RequestStop();
    });
    ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
    EXPECT_TRUE(crawler.stats().interrupted);
  }
  fetcher_->OnComplete(nullptr);
  EXPECT_TRUE(OutcomeOf("http://a.test/").outcome.empty());  // still queued
  EXPECT_EQ(RequestsOf(kRobots).size(), 7u);  // at 0 ... 22.5 min, the stop after the last
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.resumed);
  const std::vector<FakeRequestLog> tries = RequestsOf(kRobots);
  EXPECT_LE(tries.back().end - tries.front().end, 30min + 2s);
  EXPECT_EQ(OutcomeOf("http://a.test/").detail, "robots.txt: HTTP 503 for 30m (9 attempts)");
  ExpectPolite(1s);
}

}  // namespace
}  // namespace harvest::crawl
