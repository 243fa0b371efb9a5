// FetchCompletions without a Crawler: the parts over a crawl state in a temporary directory
// and a FakeClock; the test makes the leases and the fetch results itself.
#include "crawl/fetch_completions.h"

#include "crawl/crawl_parts_fixture.h"

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;
using parts_test_util::CrawlPartsTest;

class FetchCompletionsTest : public CrawlPartsTest {
 protected:
  InFlight Lease(bool robots = false) {
    std::optional<frontier::Lease> lease = frontier_->Next();
    EXPECT_TRUE(lease.has_value());
    return InFlight{.lease = std::move(*lease), .robots = robots};
  }
  static fetch::FetchResult Response(const std::string& url, int status, std::string body = "",
                                     std::string content_type = "text/html") {
    fetch::FetchResult r;
    r.url = r.effective_url = url;
    r.outcome = fetch::FetchOutcome::kOk;
    r.status = status;
    r.http_version = "1.1";
    r.headers = {{"Content-Type", content_type}};
    r.body = std::move(body);
    r.ip = "10.0.0.7";
    r.total_time = std::chrono::milliseconds(30);
    return r;
  }
  std::vector<std::string> OutcomesOf(const std::string& url) {
    std::vector<std::string> out;
    for (const auto& [u, outcome] : Outcomes()) {
      if (u == url) out.push_back(outcome);
    }
    return out;
  }
};

TEST_F(FetchCompletionsTest, APageResponseIsCountedAndGoesToTheProcessPool) {
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  completions_->OnPageDone(Lease(), Response("http://a.test/", 200, "<p>hi</p>"));
  const FetchCompletions::Counters& c = completions_->counters();
  EXPECT_EQ(c.fetches, 1u);
  EXPECT_EQ(c.pages, 1u);
  EXPECT_EQ(c.http_2xx, 1u);
  EXPECT_EQ(c.bytes_downloaded, 9u);
  EXPECT_EQ(pipeline_->pending(), 1u);
  EXPECT_EQ(frontier_->queued(), 0u);
  EXPECT_TRUE(hosts_->Ensure("http://a.test").ip_known);  // the response's IP
  uint64_t pages = 0, errors = 0;
  completions_->RecentTotals(&pages, &errors);
  EXPECT_EQ(pages, 1u);
  EXPECT_EQ(errors, 0u);
  const MetricsSnapshot& m = completions_->metrics();
  ASSERT_FALSE(m.latency_counts.empty());
  uint64_t observed = 0;
  for (uint64_t n : m.latency_counts) observed += n;
  EXPECT_EQ(observed, 1u);
}

TEST_F(FetchCompletionsTest, A503IsRetriedAndATimeoutCountedAsAnError) {
  opts_.frontier.max_attempts = 3;
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  ASSERT_EQ(Seed("http://b.test/"), frontier::AdmitVerdict::kAccept);
  completions_->OnPageDone(Lease(), Response("http://a.test/", 503));
  fetch::FetchResult timeout;
  timeout.url = "http://b.test/";
  timeout.outcome = fetch::FetchOutcome::kTimeout;
  timeout.error = "timed out";
  completions_->OnPageDone(Lease(), std::move(timeout));
  const FetchCompletions::Counters& c = completions_->counters();
  EXPECT_EQ(c.retries, 2u);
  EXPECT_EQ(c.http_5xx, 1u);
  EXPECT_EQ(c.fetch_errors, 1u);
  EXPECT_EQ(frontier_->retries_pending(), 2u);
  EXPECT_EQ(pipeline_->pending(), 0u);  // nothing stored for a retry
  EXPECT_EQ(completions_->metrics().errors_by_kind.at("timeout"), 1u);
  EXPECT_EQ(completions_->metrics().errors_by_kind.at("http_5xx"), 1u);
  uint64_t pages = 0, errors = 0;
  completions_->RecentTotals(&pages, &errors);
  EXPECT_EQ(errors, 2u);
}

TEST_F(FetchCompletionsTest, ACrawlDelayAboveTheMaximumGivesTheHostUp) {
  opts_.frontier.max_crawl_delay = 10s;
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/1"), frontier::AdmitVerdict::kAccept);
  ASSERT_EQ(Seed("http://a.test/2"), frontier::AdmitVerdict::kAccept);
  completions_->OnRobotsDone(
      Lease(/*robots=*/true),
      Response("http://a.test/robots.txt", 200, "User-agent: *\nCrawl-delay: 100\n", "text/plain"));
  const FetchCompletions::Counters& c = completions_->counters();
  EXPECT_EQ(c.robots_fetches, 1u);
  ASSERT_EQ(c.hosts_given_up.count("crawl-delay-too-long"), 1u);
  EXPECT_EQ(c.hosts_given_up.at("crawl-delay-too-long").hosts, 1u);
  EXPECT_EQ(hosts_->Ensure("http://a.test").dead_reason, "crawl-delay-too-long");
  EXPECT_EQ(OutcomesOf("http://a.test/1"), (std::vector<std::string>{"crawl-delay-too-long"}));
  EXPECT_EQ(OutcomesOf("http://a.test/2"), (std::vector<std::string>{"crawl-delay-too-long"}));
  EXPECT_EQ(frontier_->queued(), 0u);
  EXPECT_EQ(completions_->metrics().robots_outcomes.at("rules"), 1u);
  EXPECT_EQ(pipeline_->pending(), 1u);  // the robots.txt response is stored
}

TEST_F(FetchCompletionsTest, RobotsTxtSitemapLinesAreAdmitted) {
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  completions_->OnRobotsDone(
      Lease(/*robots=*/true),
      Response("http://a.test/robots.txt", 200,
               "User-agent: *\nAllow: /\nSitemap: http://a.test/sitemap.xml\n", "text/plain"));
  EXPECT_EQ(admitter_->counters().admitted, 2u);  // the seed and the sitemap
  EXPECT_EQ(frontier_->queued(), 2u);             // the page went back for its request
}

// crawl.sitemap_probe: a robots.txt without a Sitemap line admits <origin>/sitemap.xml as a
// sitemap; with one, or with the probe off (the default), nothing more.
TEST_F(FetchCompletionsTest, SitemapProbeWhenRobotsTxtNamesNone) {
  opts_.sitemap_probe = true;
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  completions_->OnRobotsDone(Lease(/*robots=*/true),
                             Response("http://a.test/robots.txt", 200,
                                      "User-agent: *\nDisallow: /private\n", "text/plain"));
  EXPECT_EQ(admitter_->counters().admitted, 2u);  // the seed and the probed sitemap
  EXPECT_EQ(frontier_->queued(), 2u);
  // Refetched robots.txt: the seen set keeps it to once per origin.
  clock_.Advance(std::chrono::seconds(2));
  completions_->OnRobotsDone(Lease(/*robots=*/true),
                             Response("http://a.test/robots.txt", 200, "", "text/plain"));
  EXPECT_EQ(admitter_->counters().admitted, 2u);
}

TEST_F(FetchCompletionsTest, SitemapProbeOffByDefaultAndNotWhenNamed) {
  OpenState();
  OpenOutput();
  ASSERT_EQ(Seed("http://a.test/"), frontier::AdmitVerdict::kAccept);
  completions_->OnRobotsDone(
      Lease(/*robots=*/true),
      Response("http://a.test/robots.txt", 200, "User-agent: *\nAllow: /\n", "text/plain"));
  EXPECT_EQ(admitter_->counters().admitted, 1u) << "the probe is off by default";
}

}  // namespace
}  // namespace harvest::crawl
