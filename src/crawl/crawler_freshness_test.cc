// The crawler as a unit, continuous crawling (docs/freshness.md): the refresh window, the
// adaptive recrawl interval, conditional GET and 304 revisits, host classes, sitemap hints,
// the recrawl share of the budget, near-duplicates, and a kill inside the window. In-process
// on a FakeFetcher and a FakeClock, like crawler_test.cc (shared fixture:
// crawler_test_fixture.h).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using crawler_test_util::OutcomeLine;
using fetch::testing::FakeFetcher;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

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

class FreshnessTest : public crawler_test_util::CrawlerTestBase {
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
