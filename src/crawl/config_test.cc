#include <gtest/gtest.h>

#include "crawl/crawl.h"

namespace harvest::crawl {
namespace {

TEST(LoadConfigStringTest, SetsEveryKindOfKey) {
  CrawlOptions o;
  Status s = LoadConfigString(R"toml(
[crawl]
max_pages = 500
user_agent = "TestBot/1.0 (+https://example.test/bot)"
[politeness]
delay_ms = 250
adaptive_factor = 1.5
[retry]
backoff_s = [1, 2, 4]
[fetch]
connect_to = ["::127.0.0.1:8080"]
http2 = false
[scope]
max_depth = 3
allowed_domains = ["example.test"]
[warc]
digest = "sha1"
)toml",
                              "test.toml", &o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(o.max_pages, 500u);
  EXPECT_EQ(o.fetch.user_agent, "TestBot/1.0 (+https://example.test/bot)");
  EXPECT_EQ(o.frontier.default_delay, std::chrono::milliseconds(250));
  EXPECT_DOUBLE_EQ(o.frontier.adaptive_factor, 1.5);
  ASSERT_EQ(o.frontier.backoff.size(), 3u);
  EXPECT_EQ(o.frontier.backoff[2], std::chrono::seconds(4));
  ASSERT_EQ(o.fetch.connect_to.size(), 1u);
  EXPECT_FALSE(o.fetch.http2);
  EXPECT_EQ(o.scope.max_depth, 3);
  EXPECT_EQ(o.scope.allowed_domains, std::vector<std::string>{"example.test"});
  EXPECT_EQ(o.warc.digest, store::DigestAlgorithm::kSha1);
}

TEST(LoadConfigStringTest, UnknownKeyNamesItsLine) {
  CrawlOptions o;
  Status s = LoadConfigString("[politeness]\n\ndealy_ms = 5\n", "h.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("h.toml:3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("politeness.dealy_ms"), std::string::npos) << s.message();
}

TEST(LoadConfigStringTest, WrongTypeAndRangeAreErrors) {
  CrawlOptions o;
  Status s = LoadConfigString("[fetch]\nhttp2 = \"yes\"\n", "t.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.toml:2"), std::string::npos) << s.message();
  s = LoadConfigString("[politeness]\ndelay_ms = -1\n", "t.toml", &o);
  EXPECT_FALSE(s.ok());
  s = LoadConfigString("[warc]\ndigest = \"md5\"\n", "t.toml", &o);
  EXPECT_FALSE(s.ok());
}

TEST(LoadConfigStringTest, OutOfRangeValuesAreErrorsNamingTheValue) {
  struct Case {
    const char* toml;
    const char* message;  // expected in the error
  };
  const Case cases[] = {
      {"[politeness]\ndelay_ms = -5\n",
       "'politeness.delay_ms' must be between 0 and 3600000, got -5"},
      {"[crawl]\nmax_pages = -1\n", "got -1"},
      {"[crawl]\nworkers = -2\n", "got -2"},
      {"[crawl]\nworkers = 100000\n", "got 100000"},
      {"[scope]\nmax_depth = -1\n", "got -1"},
      // Durations past ~292 years overflow when added to a clock time point.
      {"[crawl]\nrobots_ttl_s = 400000000000\n", "got 400000000000"},
      {"[politeness]\nmax_crawl_delay_ms = 100000000000000\n", "got 100000000000000"},
      {"[retry]\nbreaker_cooldown_s = 100000000000000\n", "got 100000000000000"},
      {"[retry]\nbackoff_s = [1, -3]\n",
       "'retry.backoff_s' entries must be between 0 and 86400, got -3"},
      {"[retry]\nbackoff_s = [1, 100000000000000]\n", "got 100000000000000"},
      {"[retry]\nbreaker_error_rate = 1.5\n",
       "'retry.breaker_error_rate' must be between 0 and 1, got 1.5"},
      {"[politeness]\nadaptive_factor = -0.5\n", "got -0.5"},
      {"[politeness]\nadaptive_factor = nan\n", "got nan"},
      {"[dedup]\nfalse_positive_rate = inf\n", "got inf"},
      {"[dedup]\nexpected_urls = 1000000000000000\n", "got 1000000000000000"},
      {"[fetch]\nconnect_timeout_ms = 0\n", "got 0"},
      {"[warc]\ngzip_level = 13\n", "got 13"},
      {"[scope]\nmode = \"bogus\"\n",
       "'scope.mode' must be \"any\", \"host\" or \"site\", got \"bogus\""},
      {"[scope]\nmode = \"Host\"\n", "got \"Host\""},
  };
  for (const Case& c : cases) {
    CrawlOptions o;
    Status s = LoadConfigString(c.toml, "r.toml", &o);
    ASSERT_FALSE(s.ok()) << c.toml;
    EXPECT_NE(s.message().find("r.toml:2: "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos)
        << "error for " << c.toml << " is: " << s.message();
  }
}

TEST(LoadConfigStringTest, ScopeMode) {
  CrawlOptions o;
  EXPECT_EQ(o.scope.mode, frontier::ScopeMode::kAny) << "default";
  ASSERT_TRUE(LoadConfigString("[scope]\nmode = \"host\"\n", "t.toml", &o).ok());
  EXPECT_EQ(o.scope.mode, frontier::ScopeMode::kHost);
  ASSERT_TRUE(LoadConfigString("[scope]\nmode = \"site\"\n", "t.toml", &o).ok());
  EXPECT_EQ(o.scope.mode, frontier::ScopeMode::kSite);
  ASSERT_TRUE(LoadConfigString("[scope]\nmode = \"any\"\n", "t.toml", &o).ok());
  EXPECT_EQ(o.scope.mode, frontier::ScopeMode::kAny);
  Status s = LoadConfigString("[scope]\nsame_site = true\n", "t.toml", &o);
  EXPECT_FALSE(s.ok()) << "same_site is replaced by mode";
  EXPECT_NE(s.message().find("unknown key 'scope.same_site'"), std::string::npos) << s.message();
}

TEST(LoadConfigStringTest, RangeLimitsThemselvesAreAccepted) {
  CrawlOptions o;
  Status s = LoadConfigString(R"toml(
[politeness]
delay_ms = 0
max_crawl_delay_ms = 86400000
[crawl]
robots_ttl_s = 31536000
workers = 256
[retry]
backoff_s = [0, 86400]
breaker_error_rate = 1
)toml",
                              "t.toml", &o);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(LoadConfigStringTest, SyntaxErrorNamesItsLine) {
  CrawlOptions o;
  Status s = LoadConfigString("[crawl]\nmax_pages = 1\nbroken = = 2\n", "s.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("s.toml:3"), std::string::npos) << s.message();
}

TEST(LoadConfigStringTest, TopLevelKeyIsAnError) {
  CrawlOptions o;
  Status s = LoadConfigString("delay_ms = 5\n", "t.toml", &o);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace harvest::crawl
