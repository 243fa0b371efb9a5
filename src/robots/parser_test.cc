// Tests of the robots.txt line tokenizer (parser.h).
#include "robots/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::robots {
namespace {

std::vector<RobotsLine> Lines(std::string_view body) {
  std::vector<RobotsLine> lines;
  ParseRobotsLines(body, [&lines](const RobotsLine& l) { lines.push_back(l); });
  return lines;
}

TEST(Parser, Rfc9309_Section2_2_KeyValueAndLineNumbers) {
  auto lines = Lines("User-agent: foo\n\n# c\nDisallow:/a  # x\n  Allow :  /b  \n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[0].key, Key::kUserAgent);
  EXPECT_EQ(lines[0].value, "foo");
  EXPECT_EQ(lines[1].number, 4);
  EXPECT_EQ(lines[1].key, Key::kDisallow);
  EXPECT_EQ(lines[1].value, "/a");
  EXPECT_EQ(lines[2].number, 5);
  EXPECT_EQ(lines[2].key, Key::kAllow);
  EXPECT_EQ(lines[2].value, "/b");
}

TEST(Parser, Rfc9309_Section2_2_MixedLineEndsCountLines) {
  auto lines = Lines("a: 1\rb: 2\r\nc: 3\nd: 4\n\r\ne: 5");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[1].number, 2);
  EXPECT_EQ(lines[2].number, 3);
  EXPECT_EQ(lines[3].number, 4);
  EXPECT_EQ(lines[4].number, 6);  // "\n\r\n" is two line ends
  EXPECT_EQ(lines[4].value, "5");
}

TEST(Parser, GoogleLib_KeyTyposAndPrefixes) {
  EXPECT_EQ(ClassifyKey("user-agent"), Key::kUserAgent);
  EXPECT_EQ(ClassifyKey("UserAgent"), Key::kUserAgent);
  EXPECT_EQ(ClassifyKey("user agent"), Key::kUserAgent);
  EXPECT_EQ(ClassifyKey("Dissallow"), Key::kDisallow);
  EXPECT_EQ(ClassifyKey("disalow"), Key::kDisallow);
  EXPECT_EQ(ClassifyKey("ALLOW"), Key::kAllow);
  EXPECT_EQ(ClassifyKey("Site-map"), Key::kSitemap);
  EXPECT_EQ(ClassifyKey("Crawl-Delay"), Key::kCrawlDelay);
  EXPECT_EQ(ClassifyKey("host"), Key::kUnknown);
  EXPECT_EQ(ClassifyKey("dis"), Key::kUnknown);
}

TEST(Parser, GoogleLib_MissingColon) {
  std::string_view name, value;
  ASSERT_TRUE(SplitLine("Disallow /path", &name, &value));
  EXPECT_EQ(name, "Disallow");
  EXPECT_EQ(value, "/path");
  EXPECT_FALSE(SplitLine("Disallow /a /b", &name, &value));
  EXPECT_FALSE(SplitLine("Disallow", &name, &value));
  EXPECT_FALSE(SplitLine("   # only a comment", &name, &value));
  EXPECT_FALSE(SplitLine(": value", &name, &value));
  ASSERT_TRUE(SplitLine("Sitemap: https://a.test/s.xml", &name, &value));
  EXPECT_EQ(value, "https://a.test/s.xml");  // only the first colon separates
}

TEST(Parser, Harvest_BomAndBinaryInput) {
  auto lines = Lines("\xEF\xBB\xBFuser-agent: x");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].key, Key::kUserAgent);
  std::string binary("\0\xFF\xFE:\x01\n\0\0", 8);
  EXPECT_EQ(ParseRobotsLines(binary, [](const RobotsLine&) {}), 2);
}

}  // namespace
}  // namespace harvest::robots
