// The admin API's crawl side (admin_backend.h) in-process, no HTTP: the crawl runs on the
// FakeFetcher and a FakeClock (crawler_test_fixture.h). Calls made from a fetcher hook run on
// the I/O thread at once (a deterministic point of the crawl); calls from the test thread
// go through the command queue while the crawl runs on a thread of its own.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "admin/backend.h"
#include "crawl/admin_backend.h"
#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

class CrawlerAdminTest : public crawler_test_util::CrawlerTestBase {
 protected:
  // Requests to `host` (host[:port]) that started in [from, to).
  size_t StartedBetween(const std::string& host, Clock::TimePoint from, Clock::TimePoint to) {
    size_t n = 0;
    for (const FakeRequestLog& r : fetcher_->log())
      n += r.host == host && r.start >= from && r.start < to;
    return n;
  }
  // The smallest gap from one request's end to the next start at `host` among requests
  // that started at or after `from`.
  Clock::Duration MinGap(const std::string& host, Clock::TimePoint from) {
    Clock::Duration min = Clock::Duration::max();
    std::optional<Clock::TimePoint> last_end;
    for (const FakeRequestLog& r : fetcher_->log()) {
      if (r.host != host || r.start < from) continue;
      if (last_end) min = std::min(min, r.start - *last_end);
      last_end = r.end;
    }
    return min;
  }
  // Spins (yielding) until the simulated clock passes `t` (the crawl advances it while it
  // waits on the fetcher); false when the crawl ended first.
  bool WaitForClock(Clock::TimePoint t, const std::atomic<bool>& ended) {
    while (clock_.Now() < t) {
      if (ended.load()) return false;
      std::this_thread::yield();
    }
    return true;
  }
  void ScriptSite() {
    fetcher_->Script("http://a.test/",
                     FakeResponse::Html(Links({"/p1", "/p2", "/p3", "http://b.test/"})));
    for (const char* p : {"http://a.test/p1", "http://a.test/p2", "http://a.test/p3"}) {
      fetcher_->Script(p, FakeResponse::Html(std::string("<title>T ") + p + "</title>page " + p));
    }
    fetcher_->Script("http://b.test/", FakeResponse::Html("b"));
  }
};

TEST_F(CrawlerAdminTest, InjectedSeedsAreCrawledAndRejectionsSayWhy) {
  ScriptSite();
  fetcher_->Script("http://c.test/new", FakeResponse::Html("new"));
  Crawler crawler(Options(), &clock_);
  admin::Backend* backend = crawler.admin_backend();
  EXPECT_EQ(backend->InjectSeeds({.urls = {"http://c.test/x"}}).status().code(),
            Status::Code::kUnavailable);  // not running yet
  Result<admin::SeedResult> injected = Status::Internal("not called");
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url != "http://a.test/") return;
    injected = backend->InjectSeeds(
        {.urls = {"http://c.test/new", "not a url", "http://a.test/", "ftp://c.test/f"},
         .priority = 0});
  });
  ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
  ASSERT_TRUE(injected.ok()) << injected.status().ToString();
  EXPECT_EQ(injected->queued, 1u);
  ASSERT_EQ(injected->rejected.size(), 3u);
  EXPECT_EQ(injected->rejected[0].reason, "invalid URL");
  EXPECT_EQ(injected->rejected[1].reason, "already seen or queued");
  EXPECT_EQ(injected->rejected[2].reason, "invalid URL: not http or https");
  EXPECT_EQ(OutcomesOf("http://c.test/new"), std::vector<std::string>{"fetched"});
  EXPECT_TRUE(crawler.stats().complete);
  EXPECT_EQ(backend->GetStatus().state, "complete");
  EXPECT_EQ(backend->InjectSeeds({.urls = {"http://c.test/y"}}).status().code(),
            Status::Code::kUnavailable);
  EXPECT_FALSE(backend->InjectSeeds({.urls = {"http://c.test/y"}, .priority = 99}).ok());
}

TEST_F(CrawlerAdminTest, InjectedSeedsSurviveAKillBeforeTheyAreFetched) {
  ScriptSite();
  fetcher_->Script("http://c.test/new", FakeResponse::Html("new"));
  {
    Crawler crawler(Options(), &clock_);
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.url != "http://a.test/") return;
      ASSERT_EQ(crawler.admin_backend()->InjectSeeds({.urls = {"http://c.test/new"}})->queued, 1u);
      crawler.KillForTesting();
    });
    EXPECT_EQ(crawler.Run({"http://a.test/"}).code(), Status::Code::kAborted);
  }
  EXPECT_EQ(fetcher_->RequestsFor("http://c.test/new"), 0u);
  fetcher_->OnComplete(nullptr);
  CrawlStats s = Crawl(Options(), {});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(fetcher_->RequestsFor("http://c.test/new"), 1u);
}

TEST_F(CrawlerAdminTest, PolicyLengthensTheGapAndSurvivesARestart) {
  ScriptSite();
  fetcher_->Script("http://a.test/robots.txt",
                   FakeResponse::Text("User-agent: *\nCrawl-delay: 2\n"));
  Clock::TimePoint set_at{};
  Status less_polite, concurrent, unknown, applied;
  {
    Crawler crawler(Options(), &clock_);
    admin::Backend* backend = crawler.admin_backend();
    fetcher_->OnComplete([&](const FakeRequestLog& r) {
      if (r.url != "http://a.test/") return;
      less_polite = backend->SetPolicy("a.test", {.crawl_delay_ms = 1500});
      concurrent = backend->SetPolicy("a.test", {.crawl_delay_ms = 9000, .max_concurrent = 2});
      unknown = backend->SetPolicy("nowhere.test", {.crawl_delay_ms = 9000});
      applied = backend->SetPolicy("a.test", {.crawl_delay_ms = 5000, .weight = 2.0});
      set_at = clock_.Now();
    });
    ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
    Result<nlohmann::json> host = backend->GetHost("a.test");
    EXPECT_EQ(host.status().code(), Status::Code::kUnavailable);  // the crawl ended
  }
  EXPECT_EQ(less_polite.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(less_polite.message().find("shorter than the host's delay 2000 ms"), std::string::npos)
      << less_polite.message();
  EXPECT_NE(less_polite.message().find("politer"), std::string::npos);
  EXPECT_EQ(concurrent.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(unknown.code(), Status::Code::kNotFound);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_GE(MinGap("a.test", set_at), 5s);
  // A restart restores the policy from the crawl state.
  fetcher_->OnComplete(nullptr);
  const Clock::TimePoint restart = clock_.Now();
  Crawler crawler(Options(), &clock_);
  nlohmann::json seen_policy;
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url == "http://a.test/q1") seen_policy = *crawler.admin_backend()->GetHost("a.test");
  });
  ASSERT_TRUE(crawler.Run({"http://a.test/q1", "http://a.test/q2", "http://a.test/q3"}).ok());
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/q3"), 1u);
  EXPECT_GE(MinGap("a.test", restart), 5s);
  EXPECT_EQ(seen_policy["policy"]["crawl_delay_ms"], 5000);
  EXPECT_EQ(seen_policy["policy"]["source"], "operator");
  EXPECT_EQ(seen_policy["policy"]["robots_crawl_delay_ms"], 2000);
  EXPECT_EQ(seen_policy["policy"]["weight"], 2.0);
}

TEST_F(CrawlerAdminTest, BlockHoldsTheHostUntilUnblockedAndLosesNothing) {
  ScriptSite();
  Crawler crawler(Options(), &clock_);
  admin::Backend* backend = crawler.admin_backend();
  std::atomic<int64_t> blocked_at{0};
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url != "http://a.test/" || blocked_at.load() != 0) return;
    ASSERT_TRUE(backend->SetBlocked("a.test", true).ok());
    EXPECT_EQ(backend->SetBlocked("nowhere.test", true).code(), Status::Code::kNotFound);
    blocked_at = clock_.WallMicros();
  });
  Status run;
  std::atomic<bool> ended{false};
  std::thread io([&] {
    run = crawler.Run({"http://a.test/"});
    ended = true;
  });
  while (blocked_at.load() == 0 && !ended.load()) std::this_thread::yield();
  const Clock::TimePoint block = Clock::TimePoint(std::chrono::microseconds(blocked_at.load()));
  EXPECT_TRUE(WaitForClock(block + 60s, ended)) << "the crawl ended while a host was blocked";
  // From this thread: through the command queue.
  admin::StatusSnapshot status = backend->GetStatus();
  EXPECT_EQ(status.state, "running");
  EXPECT_EQ(status.hosts.blocked, 1u);
  EXPECT_EQ(status.queue_depth, 3u);
  Result<nlohmann::json> host = backend->GetHost("a.test");
  EXPECT_TRUE(host.ok()) << host.status().ToString();
  if (host.ok()) {
    EXPECT_EQ((*host)["blocked"], true);
    EXPECT_EQ((*host)["queue_length"], 3);
  }
  const Clock::TimePoint before_unblock = clock_.Now();
  EXPECT_TRUE(backend->SetBlocked("a.test", false).ok());
  io.join();
  ASSERT_TRUE(run.ok()) << run.ToString();
  EXPECT_EQ(StartedBetween("a.test", block, before_unblock), 0u);
  for (const char* p : {"http://a.test/p1", "http://a.test/p2", "http://a.test/p3"}) {
    EXPECT_EQ(OutcomesOf(p), std::vector<std::string>{"fetched"}) << p;
  }
  EXPECT_TRUE(crawler.stats().complete);
}

TEST_F(CrawlerAdminTest, PauseStartsNoRequestUntilResumed) {
  ScriptSite();
  Crawler crawler(Options(), &clock_);
  admin::Backend* backend = crawler.admin_backend();
  std::atomic<int64_t> paused_at{0};
  fetcher_->OnComplete([&](const FakeRequestLog& r) {
    if (r.url != "http://a.test/p1" || paused_at.load() != 0) return;
    ASSERT_TRUE(backend->Pause().ok());
    paused_at = clock_.WallMicros();
  });
  Status run;
  std::atomic<bool> ended{false};
  std::thread io([&] {
    run = crawler.Run({"http://a.test/"});
    ended = true;
  });
  while (paused_at.load() == 0 && !ended.load()) std::this_thread::yield();
  const Clock::TimePoint pause = Clock::TimePoint(std::chrono::microseconds(paused_at.load()));
  // Long after every delay: only the pause holds requests back.
  EXPECT_TRUE(WaitForClock(pause + 120s, ended)) << "the crawl ended while paused";
  EXPECT_EQ(backend->GetStatus().state, "paused");
  const Clock::TimePoint before_resume = clock_.Now();
  EXPECT_TRUE(backend->Resume().ok());
  io.join();
  ASSERT_TRUE(run.ok()) << run.ToString();
  EXPECT_EQ(StartedBetween("a.test", pause, before_resume), 0u);
  EXPECT_EQ(StartedBetween("b.test", pause, before_resume), 0u);
  EXPECT_EQ(OutcomesOf("http://a.test/p3"), std::vector<std::string>{"fetched"});
  EXPECT_TRUE(crawler.stats().complete);
}

TEST_F(CrawlerAdminTest, PagesAreListedFilteredPagedAndReadBack) {
  ScriptSite();
  fetcher_->Script(
      "http://a.test/",
      FakeResponse::Html(Links({"/p1", "/p2", "/p3", "/copy", "/missing", "http://b.test/"})));
  fetcher_->Script("http://a.test/copy", FakeResponse::Html("<title>T http://a.test/p1</title>"
                                                            "page http://a.test/p1"));
  fetcher_->Script("http://a.test/missing", FakeResponse::Html("gone", 404));
  Crawler crawler(Options(), &clock_);
  ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
  admin::Backend* backend = crawler.admin_backend();
  // Every stored record (robots.txt included), two at a time.
  std::vector<admin::PageRecord> all;
  admin::PageQuery q{.limit = 2};
  for (int calls = 0; calls < 20; ++calls) {
    Result<admin::PageList> list = backend->ListPages(q);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    EXPECT_LE(list->pages.size(), 2u);
    all.insert(all.end(), list->pages.begin(), list->pages.end());
    if (!list->next_cursor) break;
    q.cursor = list->next_cursor;
  }
  const CrawlStats s = crawler.stats();
  EXPECT_EQ(all.size(), s.responses_stored + s.revisits_stored);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i].id, all[i - 1].id);
  Result<admin::PageList> b = backend->ListPages({.host = "b.test"});
  ASSERT_TRUE(b.ok());
  for (const admin::PageRecord& p : b->pages) EXPECT_EQ(p.url.rfind("http://b.test/", 0), 0u);
  EXPECT_EQ(b->pages.size(), 2u);  // robots.txt and the page
  Result<admin::PageList> missing = backend->ListPages({.status = 404});
  ASSERT_TRUE(missing.ok());
  std::set<std::string> missing_urls;
  for (const admin::PageRecord& p : missing->pages) missing_urls.insert(p.url);
  EXPECT_TRUE(missing_urls.count("http://a.test/missing")) << missing->pages.size();
  EXPECT_TRUE(backend->ListPages({.since_unix_ms = clock_.WallMicros() / 1000 + 1})->pages.empty());
  EXPECT_EQ(backend->ListPages({.limit = 0}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(backend->ListPages({.cursor = "x"}).status().code(), Status::Code::kInvalidArgument);
  // One page and its body; the copy is a revisit whose body comes from the original.
  const admin::PageRecord* p1 = nullptr;
  const admin::PageRecord* copy = nullptr;
  for (const admin::PageRecord& p : all) {
    if (p.url == "http://a.test/p1") p1 = &p;
    if (p.url == "http://a.test/copy") copy = &p;
  }
  ASSERT_TRUE(p1 != nullptr && copy != nullptr);
  EXPECT_EQ(p1->title, "T http://a.test/p1");
  EXPECT_EQ(p1->mime, "text/html");
  EXPECT_EQ(p1->status, 200);
  EXPECT_EQ(copy->digest, p1->digest);
  EXPECT_FALSE(p1->warc_file.empty());
  Result<admin::PageRecord> got = backend->GetPage(p1->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->url, p1->url);
  EXPECT_EQ(backend->GetPage(999'999).status().code(), Status::Code::kNotFound);
  for (const admin::PageRecord* p : {p1, copy}) {
    Result<admin::PageContent> content = backend->GetPageContent(p->id);
    ASSERT_TRUE(content.ok()) << content.status().ToString();
    EXPECT_EQ(content->body, "<title>T http://a.test/p1</title>page http://a.test/p1");
    EXPECT_NE(content->content_type.find("text/html"), std::string::npos);
  }
}

TEST_F(CrawlerAdminTest, MetricsMatchTheCrawlsStats) {
  ScriptSite();
  fetcher_->Script("http://a.test/p2", FakeResponse::WithStatus(404));
  Crawler crawler(Options(), &clock_);
  ASSERT_TRUE(crawler.Run({"http://a.test/"}).ok());
  const CrawlStats s = crawler.stats();
  const std::string text = crawler.admin_backend()->MetricsText();
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
  };
  has("harvest_fetches_total{class=\"2xx\"} " + std::to_string(s.http_2xx));
  has("harvest_fetches_total{class=\"4xx\"} " + std::to_string(s.http_4xx));
  has("harvest_robots_fetches_total " + std::to_string(s.robots_fetches));
  has("harvest_pages_stored_total " + std::to_string(s.responses_stored + s.revisits_stored));
  has("harvest_fetch_duration_seconds_count " + std::to_string(s.pages));
  has("harvest_robots_outcomes_total{outcome=\"rules\"} 2");
  has("harvest_queue_depth 0");
  admin::StatusSnapshot status = crawler.admin_backend()->GetStatus();
  EXPECT_EQ(status.pages_stored, s.responses_stored + s.revisits_stored);
  EXPECT_EQ(status.bytes_stored, s.warc_bytes);
  ASSERT_FALSE(status.busiest_hosts.empty());
  EXPECT_EQ(status.busiest_hosts[0].host, "http://a.test");
  EXPECT_EQ(status.busiest_hosts[0].pages, 4u);
}

TEST_F(CrawlerAdminTest, ReadOnlyBackendServesAFinishedCrawl) {
  ScriptSite();
  CrawlStats s = Crawl(Options(), {"http://a.test/"});
  Result<std::unique_ptr<admin::Backend>> backend = OpenReadOnlyBackend(dir_ / "crawl");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  admin::Backend& b = **backend;
  EXPECT_TRUE(b.read_only());
  EXPECT_EQ(b.GetStatus().state, "complete");
  EXPECT_EQ(b.GetStatus().pages_stored, s.responses_stored + s.revisits_stored);
  EXPECT_EQ(b.InjectSeeds({.urls = {"http://a.test/z"}}).status().code(),
            Status::Code::kUnavailable);
  EXPECT_EQ(b.Pause().code(), Status::Code::kUnavailable);
  Result<admin::PageList> list = b.ListPages({.host = "a.test", .limit = 1000});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->pages.size(), 5u);  // robots.txt, /, p1..p3
  Result<admin::PageContent> content = b.GetPageContent(list->pages.back().id);
  ASSERT_TRUE(content.ok()) << content.status().ToString();
  EXPECT_NE(content->body.find("page http://a.test/"), std::string::npos);
  EXPECT_TRUE(b.GetHost("a.test").ok());
  EXPECT_EQ(b.GetHost("nowhere.test").status().code(), Status::Code::kNotFound);
  EXPECT_NE(b.MetricsText().find("harvest_pages_stored_total"), std::string::npos);
  EXPECT_EQ(OpenReadOnlyBackend(dir_ / "none").status().code(), Status::Code::kNotFound);
}

// Every request the crawler sent has exactly one page record (docs/metadata.md "What is a
// row"): a stored fetch with its WARC location, an attempt — an answer asked again, a request
// without a response — without one; each with the crawler's outcome and reason.
TEST_F(CrawlerAdminTest, EveryRequestSentHasOnePageRecordWithItsOutcome) {
  using fetch::FetchOutcome;
  fetcher_->Script("http://a.test/",
                   FakeResponse::Html(Links({"/flaky", "/gone", "/dead", "http://b.test/"})));
  fetcher_->Script("http://a.test/flaky",
                   {FakeResponse::WithStatus(503), FakeResponse::Html("<title>ok</title>")});
  fetcher_->Script("http://a.test/gone", FakeResponse::WithStatus(500));
  fetcher_->Script("http://a.test/dead", FakeResponse::Error(FetchOutcome::kTimeout, "too slow"));
  fetcher_->Script("http://b.test/robots.txt",
                   {FakeResponse::Error(FetchOutcome::kTimeout, "robots too slow"),
                    FakeResponse::Text("User-agent: *\nAllow: /\n")});
  fetcher_->Script("http://b.test/", FakeResponse::Html("b"));
  Crawl(Options(), {"http://a.test/"});
  const size_t requests = fetcher_->log().size();
  auto backend = OpenReadOnlyBackend(dir_ / "crawl");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  Result<admin::PageList> list = (*backend)->ListPages({.limit = 1000});
  ASSERT_TRUE(list.ok());
  std::map<std::string, std::vector<admin::PageRecord>> by_url;
  for (const admin::PageRecord& p : list->pages) by_url[p.url].push_back(p);
  EXPECT_EQ(list->pages.size(), requests);
  for (const FakeRequestLog& r : fetcher_->log()) {
    EXPECT_EQ(by_url[r.url].size(), RequestsOf(r.url).size()) << r.url;
  }
  auto expect = [&](const std::string& url, size_t i, int status, const std::string& outcome,
                    const std::string& reason, bool stored) {
    ASSERT_GT(by_url[url].size(), i) << url;
    const admin::PageRecord& p = by_url[url][i];
    EXPECT_EQ(p.status, status) << url << " #" << i;
    EXPECT_EQ(p.outcome, outcome) << url << " #" << i;
    EXPECT_NE(p.reason.find(reason), std::string::npos) << url << " #" << i << ": " << p.reason;
    EXPECT_EQ(!p.warc_file.empty(), stored) << url << " #" << i;
  };
  expect("http://a.test/flaky", 0, 503, "retried", "HTTP 503 (attempt 1)", false);
  expect("http://a.test/flaky", 1, 200, "fetched", "", true);
  expect("http://a.test/gone", 0, 500, "retried", "HTTP 500 (attempt 1)", false);
  expect("http://a.test/gone", 1, 500, "retried", "HTTP 500 (attempt 2)", false);
  expect("http://a.test/gone", 2, 500, "gave-up", "HTTP 500 (3 attempts)", true);
  expect("http://a.test/dead", 0, 0, "retried", "too slow", false);
  expect("http://a.test/dead", 1, 0, "retried", "(attempt 2)", false);
  expect("http://a.test/dead", 2, 0, "gave-up", "too slow (3 attempts)", false);
  expect("http://b.test/robots.txt", 0, 0, "retried", "robots too slow", false);
  expect("http://b.test/robots.txt", 1, 200, "fetched", "", true);
  expect("http://b.test/", 0, 200, "fetched", "", true);
  // An attempt has no content to read back.
  EXPECT_EQ((*backend)->GetPageContent(by_url["http://a.test/dead"][0].id).status().code(),
            Status::Code::kNotFound);
  backend->reset();
  // The URL given up without a response was marked done (after its record): a second run
  // does not ask again.
  EXPECT_EQ(OutcomesOf("http://a.test/dead"), std::vector<std::string>{"gave-up"});
  Crawl(Options(), {"http://a.test/"});
  EXPECT_EQ(RequestsOf("http://a.test/dead").size(), 3u);
}

}  // namespace
}  // namespace harvest::crawl
