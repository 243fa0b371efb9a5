// The crawler over http and https (docs/politeness.md "http and https"): http:// links of a
// host that upgrades are asked over https:// after a few redirects (learnt) or at once (HSTS),
// robots.txt is asked once per origin, and one host name is one politeness slot.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/host_key.h"
#include "crawl/crawler_test_fixture.h"

namespace harvest::crawl {
namespace {

using crawler_test_util::Links;
using fetch::testing::FakeRequestLog;
using fetch::testing::FakeResponse;
using namespace std::chrono_literals;

class CrawlerHttpsTest : public crawler_test_util::CrawlerTestBase {
 protected:
  // Requests whose URL starts with `prefix`.
  size_t RequestsStartingWith(const std::string& prefix) const {
    size_t n = 0;
    for (const FakeRequestLog& r : fetcher_->log()) n += r.url.starts_with(prefix) ? 1 : 0;
    return n;
  }
  // One request at a time per host name, `delay` apart, whatever the scheme.
  void ExpectPolitePerName(std::chrono::milliseconds delay) const {
    std::map<std::string, Clock::TimePoint> last_end;
    for (const FakeRequestLog& r : fetcher_->log()) {
      const std::string name(NameOfAuthority(r.host));
      auto it = last_end.find(name);
      if (it != last_end.end()) {
        EXPECT_GE(r.start - it->second, delay) << r.url << " started too soon";
      }
      last_end[name] = r.end;
    }
  }
  // a.test answers every http:// URL with a 301 to its https:// twin.
  void ScriptUpgradingHost(const std::vector<std::string>& paths, std::string sts = "") {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!sts.empty()) headers.emplace_back("Strict-Transport-Security", sts);
    for (const std::string& p : paths) {
      fetcher_->Script("http://a.test" + p, FakeResponse::Redirect(301, "https://a.test" + p));
      FakeResponse page = FakeResponse::Html("page " + p);
      page.headers.insert(page.headers.end(), headers.begin(), headers.end());
      fetcher_->Script("https://a.test" + p, page);
    }
    fetcher_->Script("http://a.test/robots.txt",
                     FakeResponse::Redirect(301, "https://a.test/robots.txt"));
    FakeResponse robots = FakeResponse::Text("User-agent: *\nDisallow: /private\n");
    robots.headers.insert(robots.headers.end(), headers.begin(), headers.end());
    fetcher_->Script("https://a.test/robots.txt", robots);
  }
};

TEST_F(CrawlerHttpsTest, HttpLinksOfAHostThatRedirectsToHttpsAreLearntAfterAFewRedirects) {
  std::vector<std::string> links;
  std::vector<std::string> paths;
  for (int i = 1; i <= 8; ++i) {
    paths.push_back("/p" + std::to_string(i));
    links.push_back("http://a.test/p" + std::to_string(i));
  }
  links.push_back("http://a.test/private");
  ScriptUpgradingHost(paths);
  fetcher_->Script("https://a.test/", FakeResponse::Html(Links(links)));
  CrawlStats s = Crawl(Options(), {"https://a.test/"});
  EXPECT_TRUE(s.complete);
  // The http robots.txt's 301 lands on the https copy already in force: not asked again.
  EXPECT_EQ(fetcher_->RequestsFor("https://a.test/robots.txt"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/robots.txt"), 1u);
  // Three same-path 301s in a row (robots.txt and two pages), then no http request at all.
  EXPECT_EQ(RequestsStartingWith("http://"), 3u);
  EXPECT_EQ(s.learnt_hosts, 1u);
  for (const std::string& p : paths) {
    EXPECT_EQ(fetcher_->RequestsFor("https://a.test" + p), 1u) << p;
    EXPECT_EQ(OutcomesOf("https://a.test" + p), std::vector<std::string>{"fetched"}) << p;
  }
  EXPECT_EQ(OutcomesOf("http://a.test/p8"), std::vector<std::string>{"upgraded"});
  // Disallowed by the robots.txt both origins share: over http if leased before the host
  // was learnt, else over https; never requested.
  EXPECT_EQ(fetcher_->RequestsFor("http://a.test/private"), 0u);
  EXPECT_EQ(fetcher_->RequestsFor("https://a.test/private"), 0u);
  std::vector<std::string> priv = OutcomesOf("http://a.test/private");
  for (const std::string& o : OutcomesOf("https://a.test/private")) priv.push_back(o);
  EXPECT_NE(std::find(priv.begin(), priv.end(), "disallowed"), priv.end());
  ExpectPolitePerName(1s);
  ExpectOutcomesExplained();
}

TEST_F(CrawlerHttpsTest, HstsUpgradesEveryHttpLinkAfterTheHostsFirstHttpsResponse) {
  std::vector<std::string> paths = {"/p1", "/p2", "/p3"};
  ScriptUpgradingHost(paths, "max-age=31536000; includeSubDomains");
  fetcher_->Script(
      "https://a.test/",
      FakeResponse::Html(Links({"http://a.test/p1", "http://a.test:80/p2", "HTTP://A.TEST/p3",
                                "http://sub.a.test/", "http://b.test/"})));
  fetcher_->Script("https://sub.a.test/", FakeResponse::Html("sub"));
  fetcher_->Script("http://b.test/", FakeResponse::Html("b"));
  CrawlStats s = Crawl(Options(), {"https://a.test/"});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(RequestsStartingWith("http://a.test"), 0u);
  EXPECT_EQ(RequestsStartingWith("http://sub.a.test"), 0u);  // includeSubDomains
  EXPECT_EQ(fetcher_->RequestsFor("https://sub.a.test/"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("http://b.test/"), 1u);  // another name: as linked
  for (const std::string& p : paths) EXPECT_EQ(fetcher_->RequestsFor("https://a.test" + p), 1u);
  EXPECT_EQ(s.hsts_hosts, 1u);
  EXPECT_GE(s.upgraded, 4u);
  ExpectPolitePerName(1s);
  ExpectOutcomesExplained();
}

// What is learnt is kept with the host's state: a resumed crawl asks http:// links of the
// host over https:// at once.
TEST_F(CrawlerHttpsTest, WhatWasLearntSurvivesARestart) {
  std::vector<std::string> paths = {"/p1", "/p2", "/p3", "/p4"};
  ScriptUpgradingHost(paths);
  fetcher_->Script("https://a.test/",
                   FakeResponse::Html(Links({"http://a.test/p1", "http://a.test/p2"})));
  Crawl(Options(), {"https://a.test/"});
  ASSERT_EQ(RequestsStartingWith("http://"), 3u);
  const size_t before = fetcher_->log().size();
  // A second run with new http:// seeds of the host.
  CrawlStats s = Crawl(Options(), {"http://a.test/p3", "http://a.test/p4"});
  EXPECT_TRUE(s.complete);
  size_t http_after = 0;
  for (size_t i = before; i < fetcher_->log().size(); ++i) {
    http_after += fetcher_->log()[i].url.starts_with("http://") ? 1 : 0;
  }
  EXPECT_EQ(http_after, 0u);
  EXPECT_EQ(fetcher_->RequestsFor("https://a.test/p3"), 1u);
  EXPECT_EQ(fetcher_->RequestsFor("https://a.test/p4"), 1u);
}

}  // namespace
}  // namespace harvest::crawl
