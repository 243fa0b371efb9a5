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
}  // namespace harvest::crawl
