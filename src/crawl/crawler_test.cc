// Crawler as a unit: the whole pipeline (admission, frontier, robots gate, process pool,
// WARC writer, crawl state) in-process on a scripted FakeFetcher and a FakeClock. No
// sockets; simulated time only moves while the crawl waits on the fetcher, so a schedule of
// minutes runs in milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "crawl/crawl.h"
#include "crawl/outcome_log.h"
#include "fetch/testing/fake_fetcher.h"

namespace harvest::crawl {
namespace {

using fetch::FetchOutcome;
using fetch::testing::FakeFetcher;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

struct OutcomeLine {
  std::string url, outcome, detail;
  int status = 0;
};

std::string Links(const std::vector<std::string>& hrefs) {
  std::string html = "<html><body>";
  for (const std::string& h : hrefs) html += "<a href=\"" + h + "\">" + h + "</a> ";
  return html + "</body></html>";
}

class CrawlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("harvest_crawler_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CrawlOptions Options() {
    CrawlOptions o;
    o.out_dir = dir_ / "crawl";
    o.fetcher = fetcher_.get();
    o.workers = 2;
    o.progress = false;
    o.flush_interval = 5ms;  // real time: pages become durable quickly
    o.frontier.default_delay = 1s;
    o.frontier.backoff = {30s, 120s, 300s};
    o.frontier.max_attempts = 3;
    o.seen.expected_urls = 100'000;
    o.state.sync = false;
    o.state.block_cache_bytes = 1u << 20;
    o.state.write_buffer_bytes = 1u << 20;
    o.state.queue_ram_items = 10'000;
    o.state.ingest_every = 1000;
    o.state.queue_epoch_bits = 4;
    return o;
  }

  // Runs a crawl to its end; the status must be ok.
  CrawlStats Crawl(const CrawlOptions& o, const std::vector<std::string>& seeds) {
    Crawler crawler(o, &clock_);
    Status s = crawler.Run(seeds);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return crawler.stats();
  }

  std::vector<OutcomeLine> Outcomes() const {
    std::vector<OutcomeLine> out;
    std::ifstream f(dir_ / "crawl" / "outcomes.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      out.push_back({j["url"], j["outcome"], j.value("detail", ""), j["status"]});
    }
    return out;
  }
  // The outcomes recorded for `url`, in order.
  std::vector<std::string> OutcomesOf(const std::string& url) const {
    std::vector<std::string> out;
    for (const OutcomeLine& o : Outcomes()) {
      if (o.url == url) out.push_back(o.outcome);
    }
    return out;
  }
  const OutcomeLine* FirstOutcome(const std::string& url) {
    outcomes_cache_ = Outcomes();
    for (const OutcomeLine& o : outcomes_cache_) {
      if (o.url == url) return &o;
    }
    return nullptr;
  }
  // WARC records per URL from the CDXJ index: {url -> {responses, revisits}}.
  std::map<std::string, std::pair<int, int>> IndexedRecords() const {
    std::map<std::string, std::pair<int, int>> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "crawl")) {
      if (e.path().extension() != ".cdxj") continue;
      std::ifstream f(e.path());
      std::string line;
      while (std::getline(f, line)) {
        nlohmann::json j = nlohmann::json::parse(line.substr(line.find('{')));
        auto& counts = out[j["url"].get<std::string>()];
        (j.value("mime", "") == "warc/revisit" ? counts.second : counts.first) += 1;
      }
    }
    return out;
  }
  // Requests to `url`, in order.
  std::vector<FakeRequestLog> RequestsOf(const std::string& url) const {
    std::vector<FakeRequestLog> out;
    for (const FakeRequestLog& r : fetcher_->log()) {
      if (r.url == url) out.push_back(r);
    }
    return out;
  }
  // Every outcome is a documented name; every one but fetched/revisit says why.
  void ExpectOutcomesExplained() const {
    for (const OutcomeLine& o : Outcomes()) {
      EXPECT_TRUE(IsOutcomeName(o.outcome)) << o.outcome;
      if (o.outcome != "fetched" && o.outcome != "revisit") {
        EXPECT_FALSE(o.detail.empty()) << o.url << " " << o.outcome << " has no reason";
      }
    }
  }
  // Each host: one request at a time, and at least `delay` from one's end to the next start.
  void ExpectPolite(std::chrono::milliseconds delay) const {
    EXPECT_EQ(fetcher_->MaxInFlightPerHost(), 1u);
    std::map<std::string, Clock::TimePoint> last_end;
    for (const FakeRequestLog& r : fetcher_->log()) {
      auto it = last_end.find(r.host);
      if (it != last_end.end()) {
        EXPECT_GE(r.start - it->second, delay) << r.url << " started too soon";
      }
      last_end[r.host] = r.end;
    }
  }

  FakeClock clock_;
  std::unique_ptr<FakeFetcher> fetcher_;
  std::filesystem::path dir_;
  std::vector<OutcomeLine> outcomes_cache_;
};

// ---- the pipeline and politeness ----

TEST_F(CrawlerTest, FetchesSeedAndLinksOneAtATimeWithTheDelay) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/p1", "/p2", "http://b.test/"})));
  fetcher_->Script("http://a.test/p1", FakeResponse::Html(Links({"/p2", "/p3"})));
  fetcher_->Script("http://a.test/p2", FakeResponse::Html("two"));
  fetcher_->Script("http://a.test/p3", FakeResponse::Html("three"));
  fetcher_->Script("http://b.test/", FakeResponse::Html("b"));
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  for (const char* u : {"http://a.test/", "http://a.test/p1", "http://a.test/p2",
                        "http://a.test/p3", "http://b.test/"}) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
    EXPECT_EQ(OutcomesOf(u), std::vector<std::string>{"fetched"}) << u;
  }
  // robots.txt first, once per host.
  EXPECT_EQ(fetcher_->log().front().url, "http://a.test/robots.txt");
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/robots.txt"), 1u);
  EXPECT_EQ(s.pages, 5u);
  ExpectPolite(1s);
  ExpectOutcomesExplained();
}

TEST_F(CrawlerTest, SchemeAndPortAreSeparateHostsWithTheirOwnRobots) {
  // RFC 9309 §2.3: robots.txt applies to its scheme, host and port.
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"http://a.test:8080/x"})));
  fetcher_->Script("http://a.test:8080/robots.txt",
                   FakeResponse::Text("User-agent: *\nDisallow: /x\n"));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test:8080/robots.txt"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test:8080/x"), 0u);
  EXPECT_EQ(OutcomesOf("http://a.test:8080/x"), std::vector<std::string>{"disallowed"});
}

// ---- retries ----

TEST_F(CrawlerTest, RetriesOnTheBackoffScheduleThenGivesUp) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/flaky"})));
  fetcher_->Script("http://a.test/flaky", FakeResponse::WithStatus(503));
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  std::vector<FakeRequestLog> tries = RequestsOf("http://a.test/flaky");
  ASSERT_EQ(tries.size(), 3u);  // max_attempts
  // Retry n waits backoff[n-1] from the failed try's end (plus at most the host delay).
  EXPECT_GE(tries[1].start - tries[0].end, 30s);
  EXPECT_LE(tries[1].start - tries[0].end, 32s);
  EXPECT_GE(tries[2].start - tries[1].end, 120s);
  EXPECT_LE(tries[2].start - tries[1].end, 122s);
  const OutcomeLine* o = FirstOutcome("http://a.test/flaky");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->outcome, "gave-up");
  EXPECT_EQ(o->detail, "HTTP 503 (3 attempts)");
  EXPECT_EQ(s.retries, 2u);
  EXPECT_EQ(s.gave_up, 1u);
  ExpectOutcomesExplained();
}

TEST_F(CrawlerTest, RetrySucceedsAfterAConnectionError) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/x"})));
  fetcher_->Script("http://a.test/x", {FakeResponse::Error(FetchOutcome::kTimeout, "timed out"),
                                       FakeResponse::Html("ok")});
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/x"), 2u);
  EXPECT_EQ(OutcomesOf("http://a.test/x"), std::vector<std::string>{"fetched"});
}

TEST_F(CrawlerTest, TransportFailureOnEveryTryIsGivenUpWithItsCause) {
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/x"})));
  fetcher_->Script("http://a.test/x", FakeResponse::Error(FetchOutcome::kDnsError, "no such name"));
  Crawl(Options(), {"http://a.test/"});
  const OutcomeLine* o = FirstOutcome("http://a.test/x");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->outcome, "gave-up");
  EXPECT_EQ(o->detail, "dns_error: no such name (3 attempts)");
}

TEST_F(CrawlerTest, RetryAfterHoldsTheHost) {
  FakeResponse busy = FakeResponse::WithStatus(503);
  busy.headers.push_back({"Retry-After", "600"});
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/busy", "/next"})));
  fetcher_->Script("http://a.test/busy", {busy, FakeResponse::Html("ok")});
  fetcher_->Script("http://a.test/next", FakeResponse::Html("next"));
  Crawl(Options(), {"http://a.test/"});
  std::vector<FakeRequestLog> busy_tries = RequestsOf("http://a.test/busy");
  ASSERT_EQ(busy_tries.size(), 2u);
  // No request to the host in the 600 s after the 503.
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.start > busy_tries[0].start) {
      EXPECT_GE(r.start - busy_tries[0].end, 600s) << r.url;
    }
  }
  EXPECT_EQ(OutcomesOf("http://a.test/busy"), std::vector<std::string>{"fetched"});
}

// ---- robots.txt status policy (RFC 9309 §2.3.1) ----

TEST_F(CrawlerTest, Robots2xxRulesAreObeyed) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nDisallow: /private\n"));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/private/x", "/public"})));
  fetcher_->Script("http://a.test/public", FakeResponse::Html("p"));
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/private/x"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/public"), 1u);
  const OutcomeLine* o = FirstOutcome("http://a.test/private/x");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->outcome, "disallowed");
  EXPECT_EQ(o->detail, "Disallow: /private (robots.txt line 2)");
  EXPECT_EQ(s.disallowed, 1u);
}

TEST_F(CrawlerTest, Robots3xxIsFollowedInTheHostSlot) {
  fetcher_->Script("http://a.test/robots.txt", FakeResponse::Redirect(301, "/real-robots.txt"));
  fetcher_->Script("http://a.test/real-robots.txt",
                   FakeResponse::Text("User-agent: *\nDisallow: /x\n"));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/x", "/y"})));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/real-robots.txt"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/x"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/y"), 1u);
  ExpectPolite(1s);  // the redirect hop is a request of the host like any other
}

TEST_F(CrawlerTest, RobotsRedirectLoopMeansUnavailableAllowAll) {
  // More than 5 hops (RFC 9309 §2.3.1.2): robots.txt is unavailable, so everything is allowed.
  for (int i = 0; i < 8; ++i) {
    fetcher_->Script("http://a.test/r" + std::to_string(i),
                     FakeResponse::Redirect(302, "/r" + std::to_string(i + 1)));
  }
  fetcher_->Script("http://a.test/robots.txt", FakeResponse::Redirect(302, "/r0"));
  fetcher_->Script("http://a.test/", FakeResponse::Html("home"));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/r4"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/r5"), 0u);
  EXPECT_EQ(OutcomesOf("http://a.test/"), std::vector<std::string>{"fetched"});
}

TEST_F(CrawlerTest, Robots4xxAllowsAll) {
  fetcher_->Script("http://a.test/robots.txt", FakeResponse::WithStatus(403));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/x"})));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 1u);
  EXPECT_EQ(OutcomesOf("http://a.test/x"), std::vector<std::string>{"fetched"});
}

TEST_F(CrawlerTest, Robots5xxDisallowsAllRetriesThenGivesTheHostUp) {
  fetcher_->Script("http://a.test/robots.txt", FakeResponse::WithStatus(503));
  CrawlOptions o = Options();
  o.robots_patience = 150s;  // the outage schedule and the default: crawler_robots_test.cc
  CrawlStats s = Crawl(o, {"http://a.test/", "http://a.test/other"});
  std::vector<FakeRequestLog> tries = RequestsOf("http://a.test/robots.txt");
  ASSERT_EQ(tries.size(), 3u);
  EXPECT_GE(tries[1].start - tries[0].end, 30s);
  EXPECT_GE(tries[2].start - tries[1].end, 120s);
  EXPECT_EQ(fetcher_->log().size(), 3u);  // no page was requested
  for (const char* u : {"http://a.test/", "http://a.test/other"}) {
    const OutcomeLine* o = FirstOutcome(u);
    ASSERT_NE(o, nullptr) << u;
    EXPECT_EQ(o->outcome, "robots-unavailable");
    EXPECT_EQ(o->detail, "robots.txt: HTTP 503 for 2m30s (3 attempts)");
  }
  ASSERT_EQ(s.hosts_given_up.count("robots-unavailable"), 1u);
  EXPECT_EQ(s.hosts_given_up.at("robots-unavailable").hosts, 1u);
  EXPECT_NE(FormatSummary(s).find("gave up 1 host: robots-unavailable"), std::string::npos);
}

TEST_F(CrawlerTest, Robots429IsATemporaryFailureToo) {
  fetcher_->Script("http://a.test/robots.txt", {FakeResponse::WithStatus(429),
                                                FakeResponse::Text("User-agent: *\nAllow: /\n")});
  fetcher_->Script("http://a.test/", FakeResponse::Html("home"));
  Crawl(Options(), {"http://a.test/"});
  std::vector<FakeRequestLog> tries = RequestsOf("http://a.test/robots.txt");
  ASSERT_EQ(tries.size(), 2u);
  EXPECT_GE(tries[1].start - tries[0].end, 30s);
  EXPECT_EQ(OutcomesOf("http://a.test/"), std::vector<std::string>{"fetched"});
}

TEST_F(CrawlerTest, RobotsUnreachableNamesTheCause) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Error(FetchOutcome::kConnectError, "Connection refused"));
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  const OutcomeLine* o = FirstOutcome("http://a.test/");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->outcome, "gave-up");  // no outage: nothing listens there
  EXPECT_EQ(o->detail, "robots.txt: connect_error: Connection refused (3 attempts)");
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.pages, 0u);
  ExpectOutcomesExplained();
}

// ---- Crawl-delay ----

TEST_F(CrawlerTest, CrawlDelayIsHonoured) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nCrawl-delay: 7\n"));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/1", "/2", "/3"})));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->log().size(), 5u);
  ExpectPolite(7s);
}

TEST_F(CrawlerTest, CrawlDelayAboveTheMaximumGivesTheHostUp) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nCrawl-delay: 1000\n"));
  CrawlOptions o = Options();
  o.frontier.max_crawl_delay = 300s;
  CrawlStats s = Crawl(o, {"http://a.test/", "http://a.test/b"});
  EXPECT_EQ(fetcher_->log().size(), 1u);  // robots.txt only
  for (const char* u : {"http://a.test/", "http://a.test/b"}) {
    const OutcomeLine* out = FirstOutcome(u);
    ASSERT_NE(out, nullptr) << u;
    EXPECT_EQ(out->outcome, "crawl-delay-too-long");
    EXPECT_NE(out->detail.find("Crawl-delay 1000"), std::string::npos) << out->detail;
  }
  EXPECT_EQ(s.hosts_given_up.at("crawl-delay-too-long").hosts, 1u);
}

// ---- traps and limits on admission ----

TEST_F(CrawlerTest, EachTrapHasItsOutcome) {
  CrawlOptions o = Options();
  o.traps.max_url_length = 100;
  o.traps.max_query_params = 3;
  o.traps.max_repeated_segment = 3;
  o.max_redirect_hops = 2;
  const std::string long_url = "/" + std::string(120, 'l');
  fetcher_->Script(
      "http://a.test/",
      FakeResponse::Html(Links({long_url, "/q?a=1&b=2&c=3&d=4", "/s/t/s/t/s/t/", "/r0"})));
  fetcher_->Script("http://a.test/r0", FakeResponse::Redirect(302, "/r1"));
  fetcher_->Script("http://a.test/r1", FakeResponse::Redirect(302, "/r2"));
  fetcher_->Script("http://a.test/r2", FakeResponse::Redirect(302, "/r3"));
  Crawl(o, {"http://a.test/"});
  EXPECT_EQ(OutcomesOf("http://a.test" + long_url), std::vector<std::string>{"trap-long-url"});
  EXPECT_EQ(OutcomesOf("http://a.test/q?a=1&b=2&c=3&d=4"),
            std::vector<std::string>{"trap-many-params"});
  EXPECT_EQ(OutcomesOf("http://a.test/s/t/s/t/s/t/"),
            std::vector<std::string>{"trap-repeated-segment"});
  EXPECT_EQ(OutcomesOf("http://a.test/r3"), std::vector<std::string>{"redirect-limit"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/r3"), 0u);
  ExpectOutcomesExplained();
}

TEST_F(CrawlerTest, HostQuotaTrap) {
  CrawlOptions o = Options();
  o.traps.host_daily_quota = 3;
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/1", "/2", "/3", "/4"})));
  Crawl(o, {"http://a.test/"});
  EXPECT_EQ(OutcomesOf("http://a.test/3"), std::vector<std::string>{"trap-quota"});
  EXPECT_EQ(OutcomesOf("http://a.test/4"), std::vector<std::string>{"trap-quota"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/3"), 0u);
}

TEST_F(CrawlerTest, DiscoveryRatioTrap) {
  CrawlOptions o = Options();
  o.traps.max_discovery_ratio = 50;
  std::vector<std::string> many;
  for (int i = 0; i < 1100; ++i) many.push_back("/m" + std::to_string(i));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links(many)));
  fetcher_->SetDefault(FakeResponse::Html("leaf"));
  CrawlOptions limited = o;
  limited.max_pages = 2;  // the trap is decided on admission; no need to fetch them all
  Crawl(limited, {"http://a.test/"});
  int trapped = 0;
  for (const OutcomeLine& line : Outcomes()) trapped += line.outcome == "trap-discovery-ratio";
  EXPECT_GT(trapped, 0);
  EXPECT_EQ(OutcomesOf("http://a.test/m1099"), std::vector<std::string>{"trap-discovery-ratio"});
}

// ---- sitemaps ----

TEST_F(CrawlerTest, SitemapEntriesAreAdmitted) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nAllow: /\nSitemap: http://a.test/sm.xml\n"));
  FakeResponse sitemap;
  sitemap.headers = {{"Content-Type", "application/xml"}};
  sitemap.body =
      "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
      "<url><loc>http://a.test/from-sitemap</loc></url></urlset>";
  fetcher_->Script("http://a.test/sm.xml", sitemap);
  fetcher_->Script("http://a.test/", FakeResponse::Html("no links"));
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/sm.xml"), 1u);
  EXPECT_EQ(OutcomesOf("http://a.test/from-sitemap"), std::vector<std::string>{"fetched"});
}

// ---- per-IP cap ----

TEST_F(CrawlerTest, PerIpCapHoldsHostsSharingAnAddress) {
  CrawlOptions o = Options();
  o.frontier.per_ip_limit = 1;
  o.frontier.default_delay = 0ms;
  std::vector<std::string> seeds;
  for (const char* h : {"a", "b", "c"}) {
    std::string base = std::string("http://") + h + ".test/";
    FakeResponse page = FakeResponse::Html(Links({"/1", "/2", "/3"}));
    page.latency = 500ms;
    fetcher_->Script(base, page);
    seeds.push_back(base);
  }
  FakeResponse leaf = FakeResponse::Html("leaf");
  leaf.latency = 500ms;
  fetcher_->SetDefault(leaf);
  Crawl(o, seeds);
  // Once each host's address is known (after its first request), requests to the shared
  // address never overlap.
  Clock::TimePoint known{};
  std::set<std::string> seen_hosts;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (seen_hosts.insert(r.host).second) known = std::max(known, r.end);
  }
  std::vector<FakeRequestLog> after;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (r.start >= known) after.push_back(r);
  }
  ASSERT_GT(after.size(), 6u);
  for (size_t i = 0; i < after.size(); ++i) {
    for (size_t j = i + 1; j < after.size(); ++j) {
      const bool overlap = after[i].start < after[j].end && after[j].start < after[i].end;
      EXPECT_FALSE(overlap) << after[i].url << " overlaps " << after[j].url;
    }
  }
}

// ---- page limit, stop, resume ----

std::vector<std::string> SitePages(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("http://a.test/p" + std::to_string(i));
  return out;
}

void ScriptSite(FakeFetcher* f, int n) {
  std::vector<std::string> hrefs;
  for (int i = 0; i < n; ++i) hrefs.push_back("/p" + std::to_string(i));
  f->Script("http://a.test/", FakeResponse::Html(Links(hrefs)));
  for (int i = 0; i < n; ++i) {
    f->Script("http://a.test/p" + std::to_string(i),
              FakeResponse::Html("page " + std::to_string(i)));
  }
}

TEST_F(CrawlerTest, PageLimitStopsAndTheNextRunContinues) {
  ScriptSite(fetcher_.get(), 8);
  CrawlOptions o = Options();
  o.max_pages = 3;
  CrawlStats first = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(first.page_limit_reached);
  EXPECT_FALSE(first.complete);
  size_t pages = 0;
  for (const FakeRequestLog& r : fetcher_->log()) pages += r.url != "http://a.test/robots.txt";
  EXPECT_EQ(pages, 3u);
  EXPECT_EQ(first.still_queued, 6u);

  const size_t before = fetcher_->log().size();
  CrawlStats second = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(second.resumed);
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 1u);  // kept across runs
  for (const std::string& u : SitePages(8)) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
    EXPECT_EQ(OutcomesOf(u), std::vector<std::string>{"fetched"}) << u;
  }
  EXPECT_EQ(fetcher_->log().size() - before, 6u);
  ExpectPolite(1s);
}

TEST_F(CrawlerTest, StopFinishesInFlightWorkAndResumeCompletes) {
  ScriptSite(fetcher_.get(), 6);
  {
    Crawler crawler(Options(), &clock_);
    size_t done = 0;
    fetcher_->OnComplete([&](const FakeRequestLog&) {
      if (++done == 4) crawler.RequestStop();
    });
    ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
    EXPECT_TRUE(crawler.stats().interrupted);
    EXPECT_GT(crawler.stats().still_queued, 0u);
  }
  fetcher_->OnComplete(nullptr);
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  for (const std::string& u : SitePages(6)) {
    EXPECT_EQ(fetcher_->RequestsFor(u), 1u) << u;
    EXPECT_EQ(OutcomesOf(u), std::vector<std::string>{"fetched"}) << u;
  }
  ExpectPolite(1s);
}

TEST_F(CrawlerTest, ResumeAfterAKillLosesNothingAndStoresNothingTwice) {
  ScriptSite(fetcher_.get(), 10);
  Clock::TimePoint killed_at{};
  {
    Crawler crawler(Options(), &clock_);
    size_t done = 0;
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (++done == 6) {
        crawler.KillForTesting();
        killed_at = r.end;
      }
    });
    Status s = crawler.Run({"http://a.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  // A new process: its own fetcher (same answers), the same clock and directory.
  const std::vector<FakeRequestLog> first_run = fetcher_->log();
  fetcher_ = std::make_unique<FakeFetcher>(&clock_);
  ScriptSite(fetcher_.get(), 10);
  const Clock::TimePoint restart = clock_.Now();
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.resumed);
  EXPECT_TRUE(s.complete);
  // Every page ends fetched (or, if it was written but not marked done before the kill, a
  // revisit of the stored payload): nothing lost.
  for (const std::string& u : SitePages(10)) {
    std::vector<std::string> got = OutcomesOf(u);
    ASSERT_FALSE(got.empty()) << u << " lost";
    EXPECT_EQ(got.front(), "fetched") << u;
    for (size_t i = 1; i < got.size(); ++i) EXPECT_EQ(got[i], "revisit") << u;
  }
  // Pages requested in the first run but not yet written are requested again.
  std::set<std::string> fetched_first;
  for (const FakeRequestLog& r : first_run) fetched_first.insert(r.url);
  size_t again = 0;
  for (const std::string& u : SitePages(10))
    again += fetched_first.count(u) && fetcher_->RequestsFor(u) > 0;
  EXPECT_LE(again, 4u);  // at most what the kill left unfinished, not the whole site
  // No payload stored twice as a full response.
  for (const auto& [url, counts] : IndexedRecords()) {
    EXPECT_LE(counts.first, 1) << url << " stored " << counts.first << " times";
  }
  // The restart holds the host for a full delay: a request may have been in flight.
  ASSERT_FALSE(fetcher_->log().empty());
  EXPECT_GE(fetcher_->log().front().start - restart, 1s);
  EXPECT_GE(killed_at, Clock::TimePoint{});
  ExpectPolite(1s);
  ExpectOutcomesExplained();
}

// ---- truncated responses ----

TEST_F(CrawlerTest, LinksInTheReceivedPartOfATruncatedBodyAreFollowed) {
  FakeResponse cut = FakeResponse::Html(Links({"/early"}) + std::string(1000, ' '));
  cut.outcome = FetchOutcome::kTruncated;
  cut.truncated = "length";
  fetcher_->Script("http://a.test/", cut);
  fetcher_->Script("http://a.test/early", FakeResponse::Html("early"));
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(s.truncated, 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/early"), 1u);
  const OutcomeLine* o = FirstOutcome("http://a.test/");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->detail, "truncated: length");
}

// ---- continuous crawling (docs/freshness.md) ----

// Text of `words` distinct words seeded by `seed` (pages of different seeds share no
// shingle, so they are neither exact nor near duplicates).
std::string Words(int seed, int words) {
  std::string out;
  for (int i = 0; i < words; ++i) out += "w" + std::to_string(seed * 1000 + i) + " ";
  return out;
}

// A page at version version() with an ETag naming the version; a conditional request with
// the current ETag gets 304.
FakeFetcher::Responder Versioned(std::string name, std::function<int()> version,
                                 std::string body_prefix = "") {
  return [=](const fetch::FetchRequest& req) {
    const int v = version();
    const std::string etag = "\"" + name + "-" + std::to_string(v) + "\"";
    for (const auto& [k, val] : req.headers) {
      if (k == "If-None-Match" && val == etag) {
        FakeResponse r = FakeResponse::WithStatus(304);
        r.headers = {{"ETag", etag}};
        return r;
      }
    }
    FakeResponse r = FakeResponse::Html(
        "<html><body>" + body_prefix + "<p>" + name + " " +
        Words(static_cast<int>(std::hash<std::string>()(name) % 1000) + v * 7, 60) +
        "</p></body></html>");
    r.headers.emplace_back("ETag", etag);
    r.headers.emplace_back("Last-Modified",
                           "Tue, 01 Jan 2030 00:00:0" + std::to_string(v % 10) + " GMT");
    return r;
  };
}

std::string HeaderOf(const FakeRequestLog& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

// CDXJ lines of `url` as JSON (mime, status, ...).
std::vector<nlohmann::json> CdxjOf(const std::filesystem::path& dir, const std::string& url) {
  std::vector<nlohmann::json> out;
  // Oldest first: file names carry the time and a serial.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".cdxj") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& file : files) {
    std::ifstream f(file);
    std::string line;
    while (std::getline(f, line)) {
      nlohmann::json j = nlohmann::json::parse(line.substr(line.find('{')));
      if (j.value("url", "") == url) out.push_back(j);
    }
  }
  return out;
}

class FreshnessTest : public CrawlerTest {
 protected:
  // A host with a root linking to /static (never changes) and /news (changes at every
  // fetch when `news_changes`).
  void ScriptNews(bool news_changes) {
    fetcher_->Respond("http://a.test/", Versioned(
                                            "root", [] { return 0; }, Links({"/static", "/news"})));
    fetcher_->Respond("http://a.test/static", Versioned("static", [] { return 0; }));
    fetcher_->Respond("http://a.test/news", Versioned("news", [this, news_changes] {
                        return news_changes ? news_version_++ : 0;
                      }));
  }
  CrawlOptions Fresh(std::chrono::milliseconds window) {
    CrawlOptions o = Options();
    o.freshness.refresh_window = window;
    return o;
  }
  size_t PageRequests() const {
    size_t n = 0;
    for (const FakeRequestLog& r : fetcher_->log())
      n += r.url.find("robots.txt") == std::string::npos;
    return n;
  }
  int news_version_ = 0;
};

TEST_F(FreshnessTest, ASecondRunInsideTheWindowFetchesNothing) {
  ScriptNews(true);
  CrawlStats first = Crawl(Fresh(1h), {"http://a.test/"});
  EXPECT_TRUE(first.complete);
  EXPECT_EQ(first.scheduled, 3u);
  const size_t before = fetcher_->log().size();
  clock_.Advance(30min);
  CrawlStats second = Crawl(Fresh(1h), {"http://a.test/"});
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(fetcher_->log().size(), before) << "requested again inside the window";
  EXPECT_EQ(second.recrawls, 0u);
}

TEST_F(FreshnessTest, AfterTheWindowPagesAreAskedWithValidatorsAnd304sGrowTheInterval) {
  ScriptNews(false);
  Crawl(Fresh(1h), {"http://a.test/"});
  ASSERT_EQ(PageRequests(), 3u);
  clock_.Advance(1h + 1s);
  const size_t before = fetcher_->log().size();
  CrawlStats second = Crawl(Fresh(1h), {"http://a.test/"});
  EXPECT_EQ(second.recrawls, 3u);
  EXPECT_EQ(second.not_modified, 3u);
  EXPECT_EQ(second.unchanged, 3u);
  for (const char* u : {"http://a.test/", "http://a.test/static", "http://a.test/news"}) {
    std::vector<FakeRequestLog> tries = RequestsOf(u);
    ASSERT_EQ(tries.size(), 2u) << u;
    EXPECT_EQ(HeaderOf(tries[0], "If-None-Match"), "") << u;
    EXPECT_NE(HeaderOf(tries[1], "If-None-Match"), "") << u;
    EXPECT_NE(HeaderOf(tries[1], "If-Modified-Since"), "") << u;
    EXPECT_EQ(OutcomesOf(u), (std::vector<std::string>{"fetched", "not-modified"})) << u;
    // The 304 is a revisit in the index, pointing at the stored response.
    std::vector<nlohmann::json> lines = CdxjOf(dir_ / "crawl", u);
    ASSERT_EQ(lines.size(), 2u) << u;
    EXPECT_EQ(lines[1]["mime"], "warc/revisit") << u;
    EXPECT_EQ(lines[1]["status"], "304") << u;
    EXPECT_EQ(lines[1].value("digest", ""), lines[0].value("digest", "x")) << u;
  }
  EXPECT_EQ(fetcher_->log().size() - before, 3u);  // robots.txt not refetched (24 h TTL)
  ExpectOutcomesExplained();
  // Unchanged: the interval doubled to 2 h — not due 1 h later, due 2 h later.
  clock_.Advance(1h + 1s);
  Crawl(Fresh(1h), {"http://a.test/"});
  EXPECT_EQ(PageRequests(), 6u);
  clock_.Advance(1h);
  Crawl(Fresh(1h), {"http://a.test/"});
  EXPECT_EQ(PageRequests(), 9u);
  ExpectPolite(1s);
}

TEST_F(FreshnessTest, ChangingPagesAreFetchedMoreOftenThanStaticOnes) {
  ScriptNews(true);
  CrawlOptions o = Fresh(10min);
  o.freshness.recrawl = true;
  o.freshness.max_interval = 8h;
  o.freshness.stop_after = 6h;
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_TRUE(s.stopped_after);
  EXPECT_FALSE(s.interrupted);
  std::vector<FakeRequestLog> news = RequestsOf("http://a.test/news");
  std::vector<FakeRequestLog> stat = RequestsOf("http://a.test/static");
  // Static: intervals 10, 20, 40, 80, 160 min -> 6 fetches in 6 h. News: every ~10 min.
  EXPECT_GE(news.size(), 30u);
  EXPECT_LE(stat.size(), 7u);
  EXPECT_GE(stat.size(), 5u);
  // Never twice within the window.
  for (const auto* list : {&news, &stat}) {
    for (size_t i = 1; i < list->size(); ++i) {
      EXPECT_GE((*list)[i].start - (*list)[i - 1].start, 10min);
    }
  }
  EXPECT_GT(s.changed, 25u);
  EXPECT_GT(s.not_modified, 4u);
  // A changed page is a new response each time.
  int responses = 0;
  for (const nlohmann::json& j : CdxjOf(dir_ / "crawl", "http://a.test/news")) {
    responses += j["mime"] != "warc/revisit";
  }
  EXPECT_EQ(responses, static_cast<int>(news.size()));
  ExpectPolite(1s);
  ExpectOutcomesExplained();
}

TEST_F(FreshnessTest, AKillAndRestartInsideTheWindowRefetchesNothingEarly) {
  ScriptNews(true);
  // b.test answers slowly: its completion, after a.test's pages are durable, is the kill.
  FakeResponse slow = FakeResponse::Html("slow");
  slow.latency = 60s;
  fetcher_->Script("http://b.test/", slow);
  CrawlOptions o = Fresh(10min);
  o.freshness.recrawl = true;
  {
    Crawler crawler(o, &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.url == "http://b.test/") crawler.KillForTesting();
    });
    Status s = crawler.Run({"http://a.test/", "http://b.test/"});
    EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  }
  fetcher_->OnComplete(nullptr);
  ASSERT_EQ(RequestsOf("http://a.test/news").size(), 1u);
  const Clock::TimePoint first_fetch = RequestsOf("http://a.test/news")[0].start;
  // The restart, a few minutes later, inside the window: a.test's pages wait their turn.
  clock_.Advance(2min);
  o.freshness.stop_after = 20min;
  CrawlStats s = Crawl(o, {"http://a.test/", "http://b.test/"});
  EXPECT_TRUE(s.resumed);
  for (const char* u : {"http://a.test/", "http://a.test/static", "http://a.test/news"}) {
    std::vector<FakeRequestLog> tries = RequestsOf(u);
    ASSERT_GE(tries.size(), 2u) << u << " not recrawled after the window";
    EXPECT_GE(tries[1].start - tries[0].start, 10min) << u << " refetched early";
  }
  EXPECT_GE(RequestsOf("http://a.test/news")[1].start - first_fetch, 10min);
  ExpectPolite(1s);
}

TEST_F(FreshnessTest, HostClassesSetTheirOwnWindow) {
  fetcher_->Respond("http://news.test/", Versioned("n", [] { return 0; }));
  fetcher_->Respond("http://slow.test/", Versioned("s", [] { return 0; }));
  CrawlOptions o = Fresh(1h);
  o.freshness.classes.push_back({.hosts = {"news.test"}, .refresh_window = 5min});
  o.freshness.recrawl = true;
  o.freshness.stop_after = 50min;
  Crawl(o, {"http://news.test/", "http://slow.test/"});
  EXPECT_GE(RequestsOf("http://news.test/").size(), 4u);  // 0, 5, 15, 35 min
  EXPECT_EQ(RequestsOf("http://slow.test/").size(), 1u);
}

TEST_F(FreshnessTest, NearDuplicateOfTheLastVersionCountsAsUnchangedWhenConfigured) {
  // Each version changes one word of 800: a near-duplicate of the last one.
  int version = 0;
  fetcher_->Respond("http://a.test/", [&version](const fetch::FetchRequest&) {
    std::string text = Words(5, 800);
    text += "edition" + std::to_string(version++);
    return FakeResponse::Html("<html><body><p>" + text + "</p></body></html>");
  });
  CrawlOptions o = Fresh(10min);
  o.freshness.recrawl = true;
  o.freshness.stop_after = 3h;
  o.freshness.near_duplicate_is_unchanged = true;
  CrawlStats s = Crawl(o, {"http://a.test/"});
  // Unchanged each time: 10, 20, 40, 80 min -> 5 fetches in 3 h, not 18.
  EXPECT_LE(RequestsOf("http://a.test/").size(), 6u);
  EXPECT_GE(s.unchanged, 3u);
  EXPECT_EQ(s.changed, 0u);
}

TEST_F(FreshnessTest, ASitemapLastmodBringsARecrawlForward) {
  // /p never changes: fetched at 0, 304 at ~10 min (interval 20), 304 at ~30 (interval 40,
  // next due ~70). The sitemap on maps.test (window 5 min) changes its <lastmod> for /p at
  // 31 min; refetched at ~35 min it brings /p forward to ~40 min (its window from ~30).
  const Clock::TimePoint t0 = clock_.Now();
  fetcher_->Script(
      "http://a.test/robots.txt",
      FakeResponse::Text("User-agent: *\nAllow: /\nSitemap: http://maps.test/s.xml\n"));
  fetcher_->Respond("http://a.test/p", Versioned("p", [] { return 0; }));
  // <lastmod>: 31 min after the start, once that time has come (a W3C datetime).
  const std::time_t changed_at =
      static_cast<std::time_t>(clock_.WallMicros() / 1'000'000 + 31 * 60);
  char lastmod[32];
  std::tm tm{};
  gmtime_r(&changed_at, &tm);
  std::strftime(lastmod, sizeof lastmod, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string changed_lastmod = lastmod;
  fetcher_->Respond(
      "http://maps.test/s.xml", [this, t0, changed_lastmod](const fetch::FetchRequest&) {
        const bool changed = clock_.Now() - t0 >= 31min;
        FakeResponse r = FakeResponse::Text(
            std::string("<?xml version=\"1.0\"?><urlset "
                        "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url>"
                        "<loc>http://a.test/p</loc><lastmod>") +
            (changed ? changed_lastmod : std::string("2000-01-01")) + "</lastmod></url></urlset>");
        r.headers = {{"Content-Type", "application/xml"}};
        return r;
      });
  CrawlOptions o = Fresh(10min);
  o.freshness.recrawl = true;
  o.freshness.stop_after = 60min;
  o.freshness.classes.push_back({.hosts = {"maps.test"}, .refresh_window = 5min});
  CrawlStats s = Crawl(o, {"http://a.test/p"});
  std::vector<FakeRequestLog> p = RequestsOf("http://a.test/p");
  ASSERT_EQ(p.size(), 4u);  // without the hint: 3 (the next would be at ~70 min)
  EXPECT_GE(p[3].start - t0, 39min);
  EXPECT_LE(p[3].start - t0, 43min);
  EXPECT_GE(p[3].start - p[2].start, 10min);  // never within the window
  EXPECT_GE(s.sitemap_hints, 1u);
  ExpectPolite(1s);
}

TEST_F(FreshnessTest, RecrawlsAndNewUrlsShareTheBudget) {
  // a.test keeps discovering new pages (each links two more); b.test's 30 pages are all
  // due again after the window. With share 0.5 both kinds keep being fetched.
  fetcher_->SetDefault(FakeResponse::Html("leaf"));
  for (int i = 0; i < 400; ++i) {
    fetcher_->Script("http://a.test/n" + std::to_string(i),
                     FakeResponse::Html(Links(
                         {"/n" + std::to_string(2 * i + 1), "/n" + std::to_string(2 * i + 2)})));
  }
  std::vector<std::string> b_pages;
  for (int i = 0; i < 30; ++i) b_pages.push_back("http://b.test/" + std::to_string(i));
  fetcher_->Script("http://b.test/", FakeResponse::Html(Links(b_pages)));
  CrawlOptions o = Fresh(1min);
  o.freshness.recrawl = true;
  o.freshness.stop_after = 6min;
  o.frontier.default_delay = 1s;
  Crawl(o, {"http://a.test/n0", "http://b.test/"});
  size_t b_recrawls = 0;
  for (const std::string& u : b_pages) b_recrawls += RequestsOf(u).size() > 1;
  size_t a_new = 0;
  for (const FakeRequestLog& r : fetcher_->log()) a_new += r.host == "a.test";
  EXPECT_GE(b_recrawls, 25u) << "recrawls starved";
  EXPECT_GE(a_new, 250u) << "new URLs starved";
  ExpectPolite(1s);
}

TEST_F(FreshnessTest, NearDuplicatesAreTaggedOrKeptAsMetadataOnly) {
  const std::string text = Words(9, 800);
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/one", "/two", "/other"})));
  fetcher_->Script("http://a.test/one", FakeResponse::Html("<p>" + text + " first</p>"));
  fetcher_->Script("http://a.test/two", FakeResponse::Html("<p>" + text + " second</p>"));
  fetcher_->Script("http://a.test/other", FakeResponse::Html("<p>" + Words(77, 800) + "</p>"));
  CrawlOptions o = Options();
  o.near_dup.metadata_only = true;
  CrawlStats s = Crawl(o, {"http://a.test/"});
  EXPECT_EQ(s.near_duplicates, 1u);
  std::vector<nlohmann::json> one = CdxjOf(dir_ / "crawl", "http://a.test/one");
  std::vector<nlohmann::json> two = CdxjOf(dir_ / "crawl", "http://a.test/two");
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(one[0]["mime"], "text/html");
  EXPECT_FALSE(one[0].contains("near_dup_of"));
  EXPECT_EQ(two[0]["mime"], "warc/metadata");  // no response stored
  EXPECT_EQ(two[0]["near_dup_of"], "http://a.test/one");
  EXPECT_FALSE(CdxjOf(dir_ / "crawl", "http://a.test/other")[0].contains("near_dup_of"));
  const OutcomeLine* o2 = FirstOutcome("http://a.test/two");
  ASSERT_NE(o2, nullptr);
  EXPECT_EQ(o2->detail, "near-duplicate of http://a.test/one");
}

TEST_F(FreshnessTest, NearDuplicatesAreStoredAndTaggedByDefault) {
  const std::string text = Words(9, 800);
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/one", "/two"})));
  fetcher_->Script("http://a.test/one", FakeResponse::Html("<p>" + text + " first</p>"));
  fetcher_->Script("http://a.test/two", FakeResponse::Html("<p>" + text + " second</p>"));
  Crawl(Options(), {"http://a.test/"});
  std::vector<nlohmann::json> two = CdxjOf(dir_ / "crawl", "http://a.test/two");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0]["mime"], "text/html");
  EXPECT_EQ(two[0]["near_dup_of"], "http://a.test/one");
}

}  // namespace
}  // namespace harvest::crawl
