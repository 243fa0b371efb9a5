// HttpsUpgrades: HSTS (RFC 6797) and learnt http->https upgrades, on a fake clock.
#include "crawl/https_upgrades.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace harvest::crawl {
namespace {

using namespace std::chrono_literals;

fetch::FetchResult Response(std::string url, int status,
                            std::vector<std::pair<std::string, std::string>> headers = {}) {
  fetch::FetchResult r;
  r.url = std::move(url);
  r.outcome = fetch::FetchOutcome::kOk;
  r.status = status;
  r.headers = std::move(headers);
  return r;
}

fetch::FetchResult Sts(std::string url, std::string value) {
  return Response(std::move(url), 200, {{"Strict-Transport-Security", std::move(value)}});
}

fetch::FetchResult Moved(std::string url, std::string location, int status = 301) {
  return Response(std::move(url), status, {{"Location", std::move(location)}});
}

class HttpsUpgradesTest : public ::testing::Test {
 protected:
  HttpsUpgrades Make(HttpsUpgrades::Options o = {}) {
    return HttpsUpgrades(o, &clock_, nullptr, nullptr);
  }
  FakeClock clock_;
};

TEST_F(HttpsUpgradesTest, NothingIsUpgradedWithoutAReason) {
  HttpsUpgrades u = Make();
  EXPECT_FALSE(u.Upgrade("http://a.test/x"));
  EXPECT_FALSE(u.Upgrade("https://a.test/x"));
  EXPECT_FALSE(u.Upgrade("ftp://a.test/x"));
  EXPECT_EQ(u.stats().rewritten, 0u);
}

TEST_F(HttpsUpgradesTest, HstsUpgradesTheNameOnEveryPortUntilItExpires) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("https://a.test/", "max-age=3600"));
  std::string why;
  EXPECT_EQ(u.Upgrade("http://a.test/p?q=1", &why), "https://a.test/p?q=1");
  EXPECT_EQ(why, "hsts");
  // RFC 6797 §8.3: port 80 becomes 443, any other port is kept.
  EXPECT_EQ(u.Upgrade("http://a.test:8080/p"), "https://a.test:8080/p");
  EXPECT_FALSE(u.Upgrade("http://b.test/p"));
  EXPECT_FALSE(u.Upgrade("http://sub.a.test/p"));  // no includeSubDomains
  EXPECT_EQ(u.stats().hsts_hosts, 1u);
  clock_.Advance(3601s);
  EXPECT_FALSE(u.Upgrade("http://a.test/p"));
}

TEST_F(HttpsUpgradesTest, MaxAgeZeroClearsHsts) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("https://a.test/", "max-age=3600; includeSubDomains"));
  ASSERT_TRUE(u.Upgrade("http://a.test/"));
  u.OnResponse(Sts("https://a.test/x", "max-age=0"));
  EXPECT_FALSE(u.Upgrade("http://a.test/"));
  EXPECT_FALSE(u.Upgrade("http://b.a.test/"));
}

TEST_F(HttpsUpgradesTest, IncludeSubDomainsOnAParentCoversItsSubdomains) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("https://example.test/", "includesubdomains; MAX-AGE=\"600\""));
  EXPECT_EQ(u.Upgrade("http://a.b.example.test/x"), "https://a.b.example.test/x");
  EXPECT_EQ(u.Upgrade("http://example.test/"), "https://example.test/");
  EXPECT_FALSE(u.Upgrade("http://otherexample.test/"));
  EXPECT_FALSE(u.Upgrade("http://test/"));
}

TEST_F(HttpsUpgradesTest, HeadersOverPlainHttpAndUnverifiedHttpsAreIgnored) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("http://a.test/", "max-age=3600"));  // RFC 6797 §8.1: only over HTTPS
  EXPECT_FALSE(u.Upgrade("http://a.test/"));
  HttpsUpgrades unverified = Make({.trust_hsts = false});
  unverified.OnResponse(Sts("https://a.test/", "max-age=3600"));
  EXPECT_FALSE(unverified.Upgrade("http://a.test/"));
}

TEST_F(HttpsUpgradesTest, BadHeadersAndFailedRequestsTeachNothing) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("https://a.test/", "max-age=3600; max-age=60"));  // a directive twice
  u.OnResponse(Sts("https://b.test/", "max-age=soon"));
  fetch::FetchResult failed = Sts("https://c.test/", "max-age=3600");
  failed.outcome = fetch::FetchOutcome::kTimeout;
  failed.status = 0;
  u.OnResponse(failed);
  EXPECT_FALSE(u.Upgrade("http://a.test/"));
  EXPECT_FALSE(u.Upgrade("http://b.test/"));
  EXPECT_FALSE(u.Upgrade("http://c.test/"));
  // Only the first header counts (RFC 6797 §8.1).
  u.OnResponse(Response(
      "https://d.test/", 200,
      {{"Strict-Transport-Security", "max-age=0"}, {"Strict-Transport-Security", "max-age=3600"}}));
  EXPECT_FALSE(u.Upgrade("http://d.test/"));
}

TEST_F(HttpsUpgradesTest, IpLiteralsAreNeverUpgraded) {
  HttpsUpgrades u = Make();
  u.OnResponse(Sts("https://192.0.2.1/", "max-age=3600"));
  EXPECT_FALSE(u.Upgrade("http://192.0.2.1/"));
}

TEST_F(HttpsUpgradesTest, SamePathRedirectsInARowAreLearnt) {
  HttpsUpgrades u = Make({.learn_after = 3});
  u.OnResponse(Moved("http://a.test/robots.txt", "https://a.test/robots.txt"));
  u.OnResponse(Moved("http://a.test/p/1", "https://a.test/p/1", 308));
  EXPECT_FALSE(u.Upgrade("http://a.test/p/3"));
  u.OnResponse(Moved("http://a.test/p/2", "https://A.test:443/p/2"));
  std::string why;
  EXPECT_EQ(u.Upgrade("http://a.test/p/3", &why), "https://a.test/p/3");
  EXPECT_EQ(why, "learnt");
  EXPECT_EQ(u.stats().learnt_hosts, 1u);
  // Learnt for the default port only: another port is another server.
  EXPECT_FALSE(u.Upgrade("http://a.test:8080/p/3"));
}

TEST_F(HttpsUpgradesTest, OtherRedirectsBreakTheStreak) {
  HttpsUpgrades u = Make({.learn_after = 2});
  u.OnResponse(Moved("http://a.test/p/1", "https://a.test/p/1"));
  u.OnResponse(Moved("http://a.test/p/2", "https://a.test/elsewhere"));  // not the same path
  u.OnResponse(Moved("http://a.test/p/3", "https://a.test/p/3"));
  EXPECT_FALSE(u.Upgrade("http://a.test/x"));
  u.OnResponse(Moved("http://a.test/p/4", "https://a.test/p/4", 302));  // not permanent
  u.OnResponse(Moved("http://a.test/p/5", "https://a.test/p/5"));
  EXPECT_FALSE(u.Upgrade("http://a.test/x"));
  u.OnResponse(Moved("http://a.test/p/6", "https://b.test/p/6"));  // another name
  u.OnResponse(Moved("http://a.test/p/7", "https://a.test/p/7"));
  EXPECT_FALSE(u.Upgrade("http://a.test/x"));
  u.OnResponse(Moved("http://a.test/p/8", "https://a.test/p/8"));
  EXPECT_TRUE(u.Upgrade("http://a.test/x"));
}

TEST_F(HttpsUpgradesTest, TheLearningUndoesItselfWhenTheHostStopsRedirecting) {
  HttpsUpgrades u = Make({.learn_after = 2, .recheck_after = 3600s});
  u.OnResponse(Moved("http://a.test/1", "https://a.test/1"));
  u.OnResponse(Moved("http://a.test/2", "https://a.test/2"));
  ASSERT_TRUE(u.Upgrade("http://a.test/x"));
  // After recheck_after the next http URL is requested again...
  clock_.Advance(3601s);
  EXPECT_FALSE(u.Upgrade("http://a.test/x"));
  // ...and a host that answers it itself is no longer upgraded.
  u.OnResponse(Response("http://a.test/x", 200));
  EXPECT_FALSE(u.Upgrade("http://a.test/y"));
  // One redirect is not enough to learn it again.
  u.OnResponse(Moved("http://a.test/3", "https://a.test/3"));
  EXPECT_FALSE(u.Upgrade("http://a.test/y"));
  u.OnResponse(Moved("http://a.test/4", "https://a.test/4"));
  ASSERT_TRUE(u.Upgrade("http://a.test/y"));
  // An https URL that now redirects back to its http twin unlearns it at once.
  u.OnResponse(Moved("https://a.test/y", "http://a.test/y"));
  EXPECT_FALSE(u.Upgrade("http://a.test/y"));
}

TEST_F(HttpsUpgradesTest, RecordsSurviveARestartAndAnEmptiedCache) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("harvest_https_upgrades_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir, .sync = false});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    HttpsUpgrades u({.learn_after = 1, .cache_names = 1}, &clock_, db->get(), nullptr);
    u.OnResponse(Sts("https://example.test/", "max-age=3600; includeSubDomains"));
    u.OnResponse(Moved("http://b.test/", "https://b.test/"));
    // More names than the cache holds: emptied before the commit, read back from the state.
    u.TrimCache();
    ASSERT_TRUE((*db)->Commit().ok());
    EXPECT_FALSE(u.Upgrade("http://c.test/"));
    EXPECT_FALSE(u.Upgrade("http://d.test/"));
    EXPECT_EQ(u.Upgrade("http://www.example.test/"), "https://www.example.test/");
    EXPECT_EQ(u.Upgrade("http://b.test/x"), "https://b.test/x");
    ASSERT_TRUE((*db)->Commit().ok());
  }
  {
    Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open({.dir = dir, .sync = false});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    HttpsUpgrades fresh({}, &clock_, db->get(), nullptr);  // not resumed: reads nothing
    EXPECT_FALSE(fresh.Upgrade("http://b.test/x"));
    HttpsUpgrades u({.resumed = true}, &clock_, db->get(), nullptr);
    EXPECT_EQ(u.Upgrade("http://www.example.test/"), "https://www.example.test/");
    EXPECT_EQ(u.Upgrade("http://b.test/x"), "https://b.test/x");
    EXPECT_FALSE(u.Upgrade("http://c.test/"));
    // A shared crawl's hand-over replaces what is known.
    u.HandOver("b.test", state::UpgradeRecord{});
    EXPECT_FALSE(u.Upgrade("http://b.test/x"));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace harvest::crawl
