// The crawler as a unit, per-host budgets (docs/admission.md "Budgets"): a host over its
// discovery ratio is throttled, one at its daily quota waits for the next UTC day, and only a
// backlog beyond the cap is refused. In-process on a FakeFetcher and a FakeClock, like
// crawler_test.cc (shared fixture: crawler_test_fixture.h).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using crawler_test_util::OutcomeLine;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

using CrawlerBudgetTest = crawler_test_util::CrawlerTestBase;

// A host over its discovery ratio is throttled, not cut: its new URLs wait on disk and are
// admitted as its fetches catch up, so every one is fetched, once.
TEST_F(CrawlerBudgetTest, DiscoveryRatioThrottlesAndFetchesEverything) {
  CrawlOptions o = Options();
  o.frontier.default_delay = 1ms;
  o.traps.max_discovery_ratio = 2;
  o.traps.discovery_ratio_after = 20;  // 20 admitted at once, then 2 per fetch
  std::vector<std::string> many;
  for (int i = 0; i < 60; ++i) many.push_back("/m" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(many)));
  fetcher_->SetDefault(FakeResponse::Html("leaf"));
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(fetcher_->RequestsFor("http://a.test/m" + std::to_string(i)), 1u) << i;
  }
  EXPECT_GT(s.deferred, 0u);
  EXPECT_EQ(s.released, s.deferred) << "every deferred URL was admitted";
  EXPECT_EQ(s.deferred_waiting, 0u);
  EXPECT_EQ(s.hosts_deferred, 1u);
  EXPECT_EQ(s.backlog_refused, 0u);
  for (const OutcomeLine& line : Outcomes()) {
    EXPECT_FALSE(line.outcome.starts_with("trap-")) << line.url << " " << line.outcome;
  }
  ExpectOutcomesExplained();
  ExpectPolite(1ms);
}

// The daily quota counts fetches: a host that fetched its quota waits for the next UTC day
// (no request before it), and what it links meanwhile is deferred, then fetched.
TEST_F(CrawlerBudgetTest, DailyQuotaWaitsForTheNextDay) {
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  const int64_t midnight = 20'000 * kDay;
  clock_.SetMicros(midnight - 30'000'000);  // 23:59:30 UTC
  CrawlOptions o = Options();
  o.traps.host_daily_quota = 5;  // robots.txt and 4 pages
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/1", "/2", "/3", "/4"})));
  fetcher_->Script("http://a.test/3", FakeResponse::Html(Links({"/5", "/6"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  for (const char* p : {"/", "/1", "/2", "/3", "/4", "/5", "/6"}) {
    EXPECT_EQ(fetcher_->RequestsFor(std::string("http://a.test") + p), 1u) << p;
  }
  int before_midnight = 0;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.url != "http://a.test/robots.txt" &&
        r.start < Clock::TimePoint(std::chrono::microseconds(midnight))) {
      ++before_midnight;
    }
  }
  EXPECT_EQ(before_midnight, 4) << "the quota (robots.txt and 4 pages), then nothing before "
                                   "the next day";
  EXPECT_GT(s.quota_waits, 0u);
  EXPECT_EQ(s.deferred, 2u) << "/5 and /6 were found over the quota";
  EXPECT_EQ(s.released, s.deferred);
  ExpectOutcomesExplained();
  ExpectPolite(1s);
}

// Only a host's backlog beyond the cap is refused, each URL with its reason.
TEST_F(CrawlerBudgetTest, BacklogCapRefusesWithAReason) {
  CrawlOptions o = Options();
  o.frontier.default_delay = 1ms;
  o.traps.max_discovery_ratio = 2;
  o.traps.discovery_ratio_after = 20;
  o.traps.max_backlog = 15;
  std::vector<std::string> many;
  for (int i = 0; i < 60; ++i) many.push_back("/m" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(many)));
  fetcher_->SetDefault(FakeResponse::Html("leaf"));
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.deferred, 15u);
  EXPECT_EQ(s.released, 15u);
  EXPECT_EQ(s.backlog_refused, 60u - 19u - 15u);  // the root is the first of 20 admitted
  const OutcomeLine* refused = FirstOutcome("http://a.test/m59");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->outcome, "trap-backlog-cap");
  EXPECT_NE(refused->detail.find("backlog of a.test is full (15 URLs deferred"), std::string::npos)
      << refused->detail;
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/m59"), 0u);
  ExpectOutcomesExplained();
}

}  // namespace
}  // namespace harvest::crawl
