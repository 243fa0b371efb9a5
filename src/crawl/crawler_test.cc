// Crawler as a unit: the whole pipeline (admission, frontier, robots gate, process pool,
// WARC writer, crawl state) in-process on a scripted FakeFetcher and a FakeClock. No
// sockets; simulated time only moves while the crawl waits on the fetcher, so a schedule of
// minutes runs in milliseconds. Shared fixture: crawler_test_fixture.h; robots.txt over time
// is in crawler_robots_test.cc, continuous crawling in crawler_freshness_test.cc, budgets in
// crawler_budget_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/host_key.h"
#include "crawl/crawler_test_fixture.h"
#include "extract/extract.h"
#include "extract/test_util.h"

namespace harvest::crawl {
namespace {

using fetch::FetchOutcome;
using fetch::testing::FakeFetcher;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;
using crawler_test_util::Links;
using crawler_test_util::OutcomeLine;

class CrawlerTest : public crawler_test_util::CrawlerTestBase {
 protected:
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
};

// ---- the pipeline and politeness ----

// http://a.test, https://a.test and https://a.test:8443 are three hosts (three robots.txt)
// and one server: their requests never overlap, and each starts at least the delay after
// the previous one to the name ended.
TEST_F(CrawlerTest, TheOriginsOfOneHostNameShareOneSlotAndOneDelay) {
  fetcher_->Script("http://a.test/",
                   FakeResponse::Html(Links(
                       {"https://a.test/s1", "https://a.test:8443/p1", "/h1", "http://b.test/"})));
  fetcher_->Script("https://a.test/s1", FakeResponse::Html(Links({"/s2"})));
  for (const char* u :
       {"https://a.test/s2", "https://a.test:8443/p1", "http://a.test/h1", "http://b.test/"}) {
    fetcher_->Script(u, FakeResponse::Html(std::string("page ") + u));
  }
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.pages, 6u);
  for (const char* r : {"http://a.test/robots.txt", "https://a.test/robots.txt",
                        "https://a.test:8443/robots.txt"}) {
    EXPECT_EQ(fetcher_->RequestsFor(r), 1u) << r;  // robots.txt stays per origin
  }
  size_t to_a = 0;
  std::optional<Clock::TimePoint> last_end;
  for (const FakeRequestLog& r : fetcher_->log()) {
    if (NameOfAuthority(r.host) != "a.test") continue;
    ++to_a;
    if (last_end) {
      EXPECT_GE(r.start - *last_end, 1s) << r.url << " started too soon";
    }
    last_end = r.end;
  }
  EXPECT_EQ(to_a, 3u + 5u);
}

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

TEST_F(CrawlerTest, LinksAreFollowedFromTheShortestPathFoundBeforeTheFetch) {
  // b.test/x is first reached through a.test at depth 2 (the limit), then from b.test's own
  // seed at depth 1 while it still waits (Crawl-delay 5 s): its link /y is at depth 2 and
  // must be fetched, not refused as too deep along the first, longer path.
  CrawlOptions o = Options();
  o.scope.max_depth = 2;
  fetcher_->Script("http://b.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nCrawl-delay: 5\n"));
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/1"})));
  fetcher_->Script("http://a.test/1", FakeResponse::Html(Links({"http://b.test/x"})));
  fetcher_->Script("http://b.test/", FakeResponse::Html(Links({"/x"})));
  fetcher_->Script("http://b.test/x", FakeResponse::Html(Links({"/y"})));
  fetcher_->Script("http://b.test/y", FakeResponse::Html(Links({"/z"})));
  CrawlStats s = Crawl(o, {"http://a.test/", "http://b.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/x"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/y"), 1u);
  EXPECT_EQ(OutcomesOf("http://b.test/y"), std::vector<std::string>{"fetched"});
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/z"), 0u);  // depth 3 by either path
  EXPECT_EQ(s.depth_lowered, 1u);
  ExpectPolite(1s);
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

// A sitemap index (robots.txt) lists a .xml.gz served with Content-Encoding: gzip (gzip
// twice: the reader streams both layers) and a text sitemap cut by the fetch: every URL before
// the cut is admitted, the cut is in the outcome's detail. Sitemap fetches get a 50 MiB body
// cap, pages the configured one.
TEST_F(CrawlerTest, SitemapIndexGzipAndACutSitemapAreStreamed) {
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nSitemap: http://a.test/index.xml\n"));
  FakeResponse index;
  index.headers = {{"Content-Type", "application/xml"}};
  index.body =
      "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
      "<sitemap><loc>http://a.test/s1.xml.gz</loc></sitemap>"
      "<sitemap><loc>http://a.test/s2.txt</loc></sitemap></sitemapindex>";
  fetcher_->Script("http://a.test/index.xml", index);
  FakeResponse gz;
  gz.headers = {{"Content-Type", "application/gzip"}, {"Content-Encoding", "gzip"}};
  gz.body = extract::testing::Gzip(extract::testing::Gzip(
      "<urlset><url><loc>http://a.test/g1</loc><priority>0.9</priority></url>"
      "<url><loc>http://a.test/g2</loc></url></urlset>"));
  fetcher_->Script("http://a.test/s1.xml.gz", gz);
  FakeResponse cut = FakeResponse::Text("http://a.test/t1\nhttp://a.test/t2\nhttp://a.test/t3-cu");
  cut.outcome = FetchOutcome::kTruncated;
  cut.truncated = "length";
  fetcher_->Script("http://a.test/s2.txt", cut);
  fetcher_->Script("http://a.test/", FakeResponse::Html("no links"));
  Crawl(Options(), {"http://a.test/"});
  for (const char* url :
       {"http://a.test/g1", "http://a.test/g2", "http://a.test/t1", "http://a.test/t2"}) {
    EXPECT_EQ(OutcomesOf(url), std::vector<std::string>{"fetched"}) << url;
  }
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/t3-cu"), 0u) << "a cut line is no URL";
  bool cut_noted = false;
  for (const OutcomeLine& line : Outcomes()) {
    if (line.url == "http://a.test/s2.txt")
      cut_noted = line.detail.find("truncated") != std::string::npos;
  }
  EXPECT_TRUE(cut_noted);
  for (const auto& r : fetcher_->log()) {
    const bool sitemap = r.url.find("index.xml") != std::string::npos ||
                         r.url.find("/s1.") != std::string::npos ||
                         r.url.find("/s2.") != std::string::npos;
    EXPECT_EQ(r.max_body_bytes, sitemap ? extract::kMaxSitemapBytes : 0u) << r.url;
  }
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

// ---- content codings ----

// An uncoded body (no Content-Encoding, or "identity" in any case and spacing) is parsed as
// received; anything else goes through the decoder, whose failures and cap are recorded.
TEST_F(CrawlerTest, BodiesAreParsedThroughTheirContentCoding) {
  auto coded = [](std::string body, std::string coding) {
    FakeResponse r = FakeResponse::Html(std::move(body));
    r.headers.emplace_back("Content-Encoding", std::move(coding));
    return r;
  };
  fetcher_->Script("http://a.test/", FakeResponse::Html(Links({"/identity"})));
  fetcher_->Script("http://a.test/identity", coded(Links({"/spaced"}), "Identity"));
  fetcher_->Script("http://a.test/spaced", coded(Links({"/big", "/br"}), " identity\t"));
  fetcher_->Script("http://a.test/br", coded(Links({"/never-br"}), "br"));
  fetcher_->Script("http://a.test/big",
                   FakeResponse::Html(Links({"/never-big"}) + std::string(200, ' ')));
  CrawlOptions o = Options();
  o.max_decoded_bytes = 150;  // the other pages are shorter
  Crawl(o, {"http://a.test/"});
  for (const char* url : {"http://a.test/identity", "http://a.test/spaced", "http://a.test/br",
                          "http://a.test/big"}) {
    EXPECT_EQ(fetcher_->RequestsFor(url), 1u) << url;
  }
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/never-br"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/never-big"), 0u);
  const OutcomeLine* br = FirstOutcome("http://a.test/br");
  ASSERT_NE(br, nullptr);
  EXPECT_NE(br->detail.find("content decoding failed"), std::string::npos) << br->detail;
  const OutcomeLine* big = FirstOutcome("http://a.test/big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->detail, "decoded body over the cap (not parsed)");
}

}  // namespace
}  // namespace harvest::crawl
