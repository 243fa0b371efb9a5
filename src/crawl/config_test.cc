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
)toml", "test.toml", &o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(o.max_pages, 500u);
  EXPECT_EQ(o.fetch.user_agent, "TestBot/1.0 (+https://example.test/bot)");
  EXPECT_EQ(o.politeness.default_delay, std::chrono::milliseconds(250));
  EXPECT_DOUBLE_EQ(o.politeness.adaptive_factor, 1.5);
  ASSERT_EQ(o.politeness.backoff.size(), 3u);
  EXPECT_EQ(o.politeness.backoff[2], std::chrono::seconds(4));
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
