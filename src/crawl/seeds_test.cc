#include <gtest/gtest.h>

#include "crawl/crawl.h"

namespace harvest::crawl {
namespace {

TEST(ParseSeedsTest, SkipsBlankAndCommentLines) {
  auto r = ParseSeeds("# seeds\n\nhttp://a.test/\r\n  https://b.test/x  \n", "seeds.txt");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"http://a.test/", "https://b.test/x"}));
}

TEST(ParseSeedsTest, BadLinesReportedWithLineNumbers) {
  auto r = ParseSeeds("http://a.test/\nnot a url\nftp://c.test/\n", "seeds.txt");
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("seeds.txt:2"), std::string::npos) << m;
  EXPECT_NE(m.find("seeds.txt:3"), std::string::npos) << m;
  EXPECT_EQ(m.find("seeds.txt:1"), std::string::npos) << m;
}

TEST(ParseSeedsTest, EmptyFileIsAnError) { EXPECT_FALSE(ParseSeeds("\n# nothing\n", "s").ok()); }

}  // namespace
TEST(DefaultOutDirTest, IsNamedAfterTheSeedsHost) {
  EXPECT_EQ(DefaultOutDir("https://Example.COM/a/b?c"), "example.com");
  EXPECT_EQ(DefaultOutDir("http://a.test:8080/"), "a.test_8080");
  EXPECT_EQ(DefaultOutDir("http://a.test:80/"), "a.test");  // the default port is no port
  EXPECT_EQ(DefaultOutDir("http://[::1]:8080/"), "___1__8080");
  EXPECT_EQ(DefaultOutDir("http://127.0.0.1/"), "127.0.0.1");
  EXPECT_EQ(DefaultOutDir("not a url"), "crawl");
}

}  // namespace harvest::crawl
