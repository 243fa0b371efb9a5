// Bounded host memory and per-host state across restarts (docs/architecture.md §1.5):
// admission counters and the circuit breaker survive a kill; hosts without work leave RAM
// beyond crawl.host_cache and come back with their politeness intact.
#include <gtest/gtest.h>

#include <set>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using namespace crawler_test_util;

class CrawlerMemoryTest : public CrawlerTestBase {};

// A host's daily quota reached before a kill -9 stays reached after the restart (the same
// day): no request of it before the next day, and a URL offered after the restart waits in
// its backlog on disk — then, the next day, everything is fetched once.
TEST_F(CrawlerMemoryTest, DailyQuotaSurvivesAKill) {
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  const int64_t midnight = 20'000 * kDay;
  clock_.SetMicros(midnight - 60'000'000);  // 23:59 UTC
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p0", "/p1", "/p2"})));
  // p1 (a.test's third page) links another host: its page is fetched after a.test's count
  // reached the quota and was committed.
  fetcher_->Script("http://a.test/p1", FakeResponse::Html(Links({"http://c.test/"})));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.traps.host_daily_quota = 4;  // a.test: robots.txt, the root, p0 and p1; p2 after midnight
  {
    Crawler crawler(o, &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.url == "http://c.test/") crawler.KillForTesting();
    });
    Status s = crawler.Run({"http://a.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  fetcher_->OnComplete(nullptr);
  CrawlStats s = Crawl(o, {"http://a.test/", "http://a.test/new"});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  int before_midnight = 0;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.host == "a.test" && r.url != "http://a.test/robots.txt" &&
        r.start < Clock::TimePoint(std::chrono::microseconds(midnight))) {
      ++before_midnight;
    }
  }
  EXPECT_EQ(before_midnight, 3) << "the quota held across the restart";
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/new"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/p2"), 1u);
  EXPECT_EQ(s.deferred, 1u) << "the seed offered over the quota";
  EXPECT_EQ(s.released, 1u);
}

// URLs deferred on disk when the process is killed are admitted after the restart: every one
// fetched once, none lost, none twice.
TEST_F(CrawlerMemoryTest, DeferredUrlsSurviveAKill) {
  std::vector<std::string> many;
  for (int i = 0; i < 60; ++i) many.push_back("/m" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(many)));
  fetcher_->SetDefault(FakeResponse::Html("leaf"));
  CrawlOptions o = Options();
  o.frontier.default_delay = 1ms;
  o.traps.max_discovery_ratio = 2;
  o.traps.discovery_ratio_after = 20;
  uint64_t deferred_before = 0;
  std::set<std::string> fetched_before;
  {
    Crawler crawler(o, &clock_);
    int fetched = 0;
    fetcher_->OnComplete([&](const FakeRequestLog&) {
      if (++fetched == 5) crawler.KillForTesting();  // before the ratio lets the backlog in
    });
    Status s = crawler.Run({"http://a.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
    deferred_before = crawler.stats().deferred;
  }
  for (const FakeRequestLog& r : fetcher_->log()) fetched_before.insert(r.url);
  EXPECT_GT(deferred_before, 0u);
  fetcher_->OnComplete(nullptr);
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  EXPECT_GT(s.released, 0u) << "the backlog left on disk was admitted in this run";
  EXPECT_EQ(s.deferred_waiting, 0u);
  // Once each; a page fetched before the kill may be fetched again (not yet durable).
  for (int i = 0; i < 60; ++i) {
    const std::string url = "http://a.test/m" + std::to_string(i);
    ASSERT_GE(fetcher_->RequestsFor(url), 1u) << url;
    ASSERT_LE(fetcher_->RequestsFor(url), fetched_before.contains(url) ? 2u : 1u) << url;
  }
}

// A host whose circuit breaker opened before a kill -9 stays paused after the restart until
// its cooldown ends.
TEST_F(CrawlerMemoryTest, OpenBreakerSurvivesAKill) {
  std::vector<std::string> b_pages, c_pages;
  for (int i = 0; i < 4; ++i) b_pages.push_back("/p" + std::to_string(i));
  for (int i = 0; i < 30; ++i) c_pages.push_back("/p" + std::to_string(i));
  fetcher_->Script("http://b.test/", FakeResponse::Html(Links(b_pages)));
  for (const std::string& p : b_pages) {
    fetcher_->Script("http://b.test" + p, FakeResponse::WithStatus(503));
  }
  fetcher_->Script("http://c.test/", FakeResponse::Html(Links(c_pages)));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.frontier.breaker_cooldown = std::chrono::seconds(600);
  o.frontier.backoff = {1s};
  o.frontier.max_attempts = 2;
  Clock::TimePoint opened{};
  int b_errors = 0;
  {
    Crawler crawler(o, &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.host == "b.test" && r.status == 503 && ++b_errors == 3) opened = r.end;
      // A few requests to c.test later (the breaker's state was committed since).
      if (b_errors >= 3 && r.host == "c.test" && r.start - opened > 3s) crawler.KillForTesting();
    });
    Status s = crawler.Run({"http://b.test/", "http://c.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  ASSERT_EQ(b_errors, 3);
  const Clock::TimePoint restart = clock_.Now();
  ASSERT_LT(restart - opened, 60s);
  fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  for (const std::string& p : b_pages) {
    fetcher_->Script("http://b.test" + p, FakeResponse::Html("recovered"));
  }
  fetcher_->SetDefault(FakeResponse::Html("page"));
  o.fetcher = fetcher_.get();
  CrawlStats s = Crawl(o, {"http://b.test/", "http://c.test/"});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  bool any = false;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.host != "b.test") continue;
    any = true;
    EXPECT_GE(r.start - opened, 600s) << r.url << " requested while the breaker was open";
  }
  EXPECT_TRUE(any);
}

// A host's politeness record is written at its first completion and with a Retry-After;
// completions that only move its next-allowed time on are not written. After a kill -9
// the Retry-After still holds, and a host whose last completions were not written still
// waits its full delay from the restart.
TEST_F(CrawlerMemoryTest, PolitenessSurvivesAKillWithoutAWritePerFetch) {
  FakeResponse busy = FakeResponse::WithStatus(503);
  busy.headers.push_back({"Retry-After", "600"});
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p1", "/busy"})));
  fetcher_->Script("http://a.test/busy", busy);
  std::vector<std::string> c_pages;
  for (int i = 0; i < 20; ++i) c_pages.push_back("/p" + std::to_string(i));
  fetcher_->Script("http://c.test/", FakeResponse::Html(Links(c_pages)));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  Clock::TimePoint busy_end{}, c_last_end{};
  {
    Crawler crawler(o, &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.url == "http://a.test/busy") busy_end = r.end;
      // c.test's root and a few pages: its later completions only moved its time on.
      if (r.host == "c.test") c_last_end = r.end;
      if (r.url == "http://c.test/p4") crawler.KillForTesting();
    });
    Status s = crawler.Run({"http://a.test/", "http://c.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  ASSERT_NE(busy_end, Clock::TimePoint{});
  ASSERT_LT(c_last_end - busy_end, 60s);
  fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  fetcher_->SetDefault(FakeResponse::Html("page"));
  o.fetcher = fetcher_.get();
  CrawlStats s = Crawl(o, {"http://a.test/", "http://c.test/"});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/busy"), 1u);  // the retry, after the restart
  bool a_any = false, c_any = false;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.host == "a.test") {
      a_any = true;
      EXPECT_GE(r.start - busy_end, 600s) << r.url << " requested inside the Retry-After";
    } else if (r.host == "c.test") {
      c_any = true;
      EXPECT_GE(r.start - c_last_end, 1s) << r.url << " requested within the delay";
    }
  }
  EXPECT_TRUE(a_any);
  EXPECT_TRUE(c_any);
}

// With a host cache of 4, a chain of 20 hosts is crawled with at most 4 hosts in RAM; a
// late link to an evicted host waits for that host's Crawl-delay from its last request,
// and its robots.txt is not fetched again within the TTL.
TEST_F(CrawlerMemoryTest, EvictedHostComesBackWithItsPoliteness) {
  constexpr int kChain = 20;
  auto host = [](int i) { return "http://h" + std::to_string(i) + ".test"; };
  fetcher_->Script(host(0) + "/robots.txt",
                   FakeResponse::Text("User-agent: *\nCrawl-delay: 100\n"));
  fetcher_->Script(host(0) + "/", FakeResponse::Html(Links({host(1) + "/"})));
  for (int i = 1; i <= kChain; ++i) {
    std::vector<std::string> links = {"/p"};
    links.push_back(i < kChain ? host(i + 1) + "/" : host(0) + "/late");
    fetcher_->Script(host(i) + "/", FakeResponse::Html(Links(links)));
    fetcher_->Script(host(i) + "/p", FakeResponse::Html("page " + std::to_string(i)));
  }
  fetcher_->Script(host(0) + "/late", FakeResponse::Html("late"));
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.host_cache = 4;
  o.scope.max_depth = 100;  // a chain of hosts, one level each
  CrawlStats s = Crawl(o, {host(0) + "/"});
  EXPECT_TRUE(s.complete);
  for (int i = 1; i <= kChain; ++i) {
    EXPECT_EQ(OutcomesOf(host(i) + "/p"), std::vector<std::string>{"fetched"}) << i;
  }
  EXPECT_EQ(OutcomesOf(host(0) + "/late"), std::vector<std::string>{"fetched"});
  EXPECT_LE(s.hosts_resident_peak, 4u);
  EXPECT_GE(s.hosts_evicted, static_cast<uint64_t>(kChain - 4));
  EXPECT_GE(s.hosts_reloaded, 1u);
  // h0 came back: its robots.txt was not asked again, its Crawl-delay held.
  EXPECT_EQ(fetcher_->RequestsFor(host(0) + "/robots.txt"), 1u);
  const std::vector<FakeRequestLog> root = RequestsOf(host(0) + "/");
  const std::vector<FakeRequestLog> late = RequestsOf(host(0) + "/late");
  ASSERT_EQ(root.size(), 1u);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_GE(late[0].start - root[0].end, 100s);
  ExpectPolite(1s);
  ExpectOutcomesExplained();
}

// Every host has work from the start (30 seeds) but only 4 fit in the host table: the
// URLs of the others wait on disk (parked) and come in as hosts finish and leave. Every
// page is fetched once, politely, with at most 4 hosts in RAM.
TEST_F(CrawlerMemoryTest, SeededHostsBeyondTheCacheWaitOnDisk) {
  constexpr int kHosts = 30;
  std::vector<std::string> seeds;
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://s" + std::to_string(i) + ".test";
    // Cross-host links too: to a host that may be parked, or in RAM, or done.
    const std::string other = "http://s" + std::to_string((i + 7) % kHosts) + ".test/x";
    fetcher_->Script(h + "/", FakeResponse::Html(Links({"/a", "/b", other})));
    seeds.push_back(h + "/");
  }
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.host_cache = 4;
  CrawlStats s = Crawl(o, seeds);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.still_queued, 0u);
  EXPECT_LE(s.hosts_resident_peak, 4u);
  EXPECT_GT(s.unparked, 0u);
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://s" + std::to_string(i) + ".test";
    for (const char* p : {"/", "/a", "/b", "/x"}) {
      EXPECT_EQ(fetcher_->RequestsFor(h + p), 1u) << h << p;
    }
  }
  ExpectPolite(1s);
  ExpectOutcomesExplained();
}

// While URLs are parked, a host not in RAM waits its turn even when the table has room
// (parked hosts come in by batches of a sixteenth of the table): a link alone never lets a
// host in ahead of its parked seed, which would leave the pages it fetched first at the
// depth of the path through other hosts. Every host's root is fetched before the page
// other hosts link to.
TEST_F(CrawlerMemoryTest, AHostNotInRamComesInWithItsParkedSeed) {
  constexpr int kHosts = 120;
  std::vector<std::string> seeds;
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://w" + std::to_string(i) + ".test";
    const std::string other = "http://w" + std::to_string((i * 37 + 11) % kHosts) + ".test/x";
    fetcher_->Script(h + "/", FakeResponse::Html(Links({"/a", other})));
    seeds.push_back(h + "/");
  }
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.host_cache = 32;
  CrawlStats s = Crawl(o, seeds);
  EXPECT_TRUE(s.complete);
  EXPECT_GT(s.unparked, 0u);
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://w" + std::to_string(i) + ".test";
    const std::vector<FakeRequestLog> root = RequestsOf(h + "/");
    const std::vector<FakeRequestLog> x = RequestsOf(h + "/x");
    ASSERT_EQ(root.size(), 1u) << h;
    ASSERT_EQ(x.size(), 1u) << h;
    EXPECT_LT(root[0].start, x[0].start) << h;
  }
  ExpectPolite(1s);
}

// Parked URLs are durable: a kill -9 while most hosts wait on disk loses none, and the
// restarted crawl fetches every page.
TEST_F(CrawlerMemoryTest, ParkedUrlsSurviveAKill) {
  constexpr int kHosts = 24;
  std::vector<std::string> seeds;
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://k" + std::to_string(i) + ".test";
    fetcher_->Script(h + "/", FakeResponse::Html(Links({"/a", "/b"})));
    seeds.push_back(h + "/");
  }
  fetcher_->SetDefault(FakeResponse::Html("page"));
  CrawlOptions o = Options();
  o.host_cache = 3;
  size_t first_run = 0;
  {
    Crawler crawler(o, &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog&) {
      // Later than a flush interval: some of the parked URLs' batches are written.
      if (++first_run == 20) crawler.KillForTesting();
    });
    Status s = crawler.Run(seeds);
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  std::set<std::string> fetched;
  for (const FakeRequestLog& r : fetcher_->log()) fetched.insert(r.url);
  fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://k" + std::to_string(i) + ".test";
    fetcher_->Script(h + "/", FakeResponse::Html(Links({"/a", "/b"})));
  }
  fetcher_->SetDefault(FakeResponse::Html("page"));
  o.fetcher = fetcher_.get();
  // No seeds the second time: what was parked must come from the crawl state.
  CrawlStats s = Crawl(o, {});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.still_queued, 0u);
  for (const FakeRequestLog& r : fetcher_->log()) fetched.insert(r.url);
  for (int i = 0; i < kHosts; ++i) {
    const std::string h = "http://k" + std::to_string(i) + ".test";
    for (const char* p : {"/", "/a", "/b"}) EXPECT_TRUE(fetched.contains(h + p)) << h << p;
  }
  // The resumed run starts with every host that had a URL queued or in flight: a host done
  // and evicted whose last page was still in the pipeline at the kill (fetched, not yet
  // stored, so its queue entry was still on disk) comes back beside the three that had
  // work. No further host comes in until those are done.
  EXPECT_GE(s.resumed_hosts, 1u);
  EXPECT_LE(s.hosts_resident_peak, std::max<uint64_t>(3, s.resumed_hosts));
}

}  // namespace
}  // namespace harvest::crawl
