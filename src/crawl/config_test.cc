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
native_http = false
native_https = false
max_idle_connections = 64
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
  EXPECT_FALSE(o.fetch.native_http);
  EXPECT_FALSE(o.fetch.native_https);
  EXPECT_EQ(o.fetch.max_idle_connections, 64u);
  EXPECT_EQ(o.scope.max_depth, 3);
  EXPECT_EQ(o.scope.allowed_domains, std::vector<std::string>{"example.test"});
  EXPECT_EQ(o.warc.digest, store::DigestAlgorithm::kSha1);
}

// [state]'s block cache bounds (docs/configuration.md "[state]").
TEST(LoadConfigStringTest, StateBlockCacheBounds) {
  CrawlOptions o;
  EXPECT_EQ(o.state.block_cache_bytes, 64u << 20);
  EXPECT_EQ(o.state.block_cache_max_bytes, 512u << 20);
  Status s =
      LoadConfigString("[state]\nblock_cache_mb = 32\nblock_cache_max_mb = 2048\n", "s.toml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.state.block_cache_bytes, 32u << 20);
  EXPECT_EQ(o.state.block_cache_max_bytes, 2048u << 20);
  EXPECT_FALSE(LoadConfigString("[state]\nblock_cache_max_mb = 0\n", "s.toml", &o).ok());
}

// [dns] and the per-IP default (docs/configuration.md "[dns]").
TEST(LoadConfigStringTest, DnsKeysAndPerIpDefault) {
  CrawlOptions o;
  EXPECT_EQ(o.frontier.per_ip_limit, 10u) << "per-IP politeness is on by default";
  EXPECT_EQ(o.host_cache, 20'000u);
  EXPECT_EQ(o.fetch.max_idle_connections, 2048u);
  Status s = LoadConfigString(
      "[dns]\nresolve_file = \"pins.txt\"\nservers = \"127.0.0.1:5353\"\nmin_ttl = \"30s\"\n"
      "max_ttl = \"2h\"\nnegative_ttl = \"5s\"\ntimeout = \"2s\"\ntries = 3\n"
      "cache_entries = 5000\n[politeness]\nper_ip_limit = 0\n",
      "d.toml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.resolve_file, "pins.txt");
  EXPECT_EQ(o.dns.servers, "127.0.0.1:5353");
  EXPECT_EQ(o.dns.min_ttl, std::chrono::seconds(30));
  EXPECT_EQ(o.dns.max_ttl, std::chrono::seconds(7200));
  EXPECT_EQ(o.dns.negative_ttl, std::chrono::seconds(5));
  EXPECT_EQ(o.dns.timeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(o.dns.tries, 3);
  EXPECT_EQ(o.dns.max_entries, 5000u);
  EXPECT_EQ(o.frontier.per_ip_limit, 0u);
  s = LoadConfigString("[dns]\n\nmax_ttl = \"soon\"\n", "d.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("d.toml:3"), std::string::npos) << s.message();
  s = LoadConfigString("[dns]\ntries = 0\n", "d.toml", &o);
  EXPECT_FALSE(s.ok());
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

namespace harvest::crawl {
namespace {

TEST(LoadConfigStringTest, DurationsAreAcceptedEverywhere) {
  CrawlOptions o;
  Status s = LoadConfigString(R"(
[politeness]
delay_ms = "1s500ms"
[crawl]
robots_ttl_s = "12h"
robots_patience = "10m"
[retry]
backoff_s = ["30s", 120, "5m"]
[recrawl]
continuous = true
refresh_window = "30s"
max_interval = "30d"
stop_after = "70s"
grow = 3.0
shrink = 0.25
share = 0.3
conditional_get = false
near_duplicate_is_unchanged = true
[[recrawl.class]]
hosts = ["news.test", "*.daily.test"]
refresh_window = "1h"
max_interval = "1d"
[[recrawl.class]]
hosts = ["slow.test"]
refresh_window = "7d"
[dedup]
near_max_distance = 2
near_duplicates = "metadata"
near_index_max = 1000
)",
                              "d.toml", &o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  using std::chrono::milliseconds;
  EXPECT_EQ(o.frontier.default_delay, milliseconds(1500));
  EXPECT_EQ(o.robots_ttl, std::chrono::hours(12));
  EXPECT_EQ(o.robots_patience, std::chrono::minutes(10));
  EXPECT_EQ(o.frontier.backoff,
            (std::vector<std::chrono::seconds>{std::chrono::seconds(30), std::chrono::seconds(120),
                                               std::chrono::seconds(300)}));
  EXPECT_TRUE(o.freshness.recrawl);
  EXPECT_EQ(o.freshness.refresh_window, milliseconds(30'000));
  EXPECT_EQ(o.freshness.max_interval, std::chrono::hours(24 * 30));
  EXPECT_EQ(o.freshness.stop_after, milliseconds(70'000));
  EXPECT_EQ(o.freshness.grow, 3.0);
  EXPECT_EQ(o.freshness.shrink, 0.25);
  EXPECT_EQ(o.freshness.recrawl_share, 0.3);
  EXPECT_FALSE(o.freshness.conditional_get);
  EXPECT_TRUE(o.freshness.near_duplicate_is_unchanged);
  ASSERT_EQ(o.freshness.classes.size(), 2u);
  EXPECT_EQ(o.freshness.classes[0].hosts, (std::vector<std::string>{"news.test", "*.daily.test"}));
  EXPECT_EQ(o.freshness.classes[0].refresh_window, std::chrono::hours(1));
  EXPECT_EQ(o.freshness.classes[0].max_interval, std::chrono::hours(24));
  EXPECT_EQ(o.freshness.classes[1].refresh_window, std::chrono::hours(24 * 7));
  EXPECT_EQ(o.freshness.classes[1].max_interval, milliseconds(0));
  EXPECT_EQ(o.near_dup.max_distance, 2);
  EXPECT_TRUE(o.near_dup.metadata_only);
  EXPECT_EQ(o.near_dup.index_max, 1000u);
}

TEST(LoadConfigStringTest, BadDurationsNameTheKeyAndTheForm) {
  const std::pair<const char*, const char*> cases[] = {
      {"[recrawl]\nrefresh_window = \"30\"\n", "'recrawl.refresh_window': bad duration \"30\""},
      {"[recrawl]\nrefresh_window = 30\n", "'recrawl.refresh_window' must be a duration"},
      {"[recrawl]\nrefresh_window = \"500ms\"\n", "must be between 1s and"},
      {"[politeness]\ndelay_ms = \"2h\"\n", "must be between 0s and 1h, got 2h"},
      {"[recrawl]\nstop_after = \"1x\"\n", "unknown unit"},
      {"[[recrawl.class]]\nrefresh_window = \"1h\"\n", "needs hosts"},
      {"[[recrawl.class]]\nhosts = [\"a\"]\nwindow = \"1h\"\n",
       "unknown key 'recrawl.class.window'"},
      {"[dedup]\nnear_duplicates = \"drop\"\n", "must be \"store\" or \"metadata\""},
  };
  for (const auto& [toml, message] : cases) {
    CrawlOptions o;
    Status s = LoadConfigString(toml, "b.toml", &o);
    ASSERT_FALSE(s.ok()) << toml;
    EXPECT_NE(s.message().find(message), std::string::npos) << toml << " -> " << s.message();
  }
}

}  // namespace
}  // namespace harvest::crawl
