// Tests of path normalisation and the compiled pattern matcher (pattern.h).
#include "robots/pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace harvest::robots {
namespace {

bool Match(std::string_view rule, std::string_view path) {
  std::string normalized;
  if (!NormalizePath(path, &normalized)) normalized = std::string(path);
  return PathPattern(NormalizePattern(rule)).Matches(normalized);
}

TEST(Pattern, Rfc9309_Section2_2_2_NormalizePath) {
  std::string out;
  EXPECT_FALSE(NormalizePath("/plain/path?q=1", &out));
  ASSERT_TRUE(NormalizePath("/a%2fb%7e%41", &out));
  EXPECT_EQ(out, "/a%2Fb~A");
  ASSERT_TRUE(NormalizePath("/\xE3\x83\x84*$", &out));
  EXPECT_EQ(out, "/%E3%83%84%2A%24");
  ASSERT_TRUE(NormalizePath("/100%", &out));
  EXPECT_EQ(out, "/100%");
  ASSERT_TRUE(NormalizePath("/%zz%4", &out));
  EXPECT_EQ(out, "/%zz%4");
}

TEST(Pattern, Rfc9309_Section2_2_2_NormalizePattern) {
  EXPECT_EQ(NormalizePattern("/a*b$"), "/a*b$");
  EXPECT_EQ(NormalizePattern("/a$b"), "/a%24b");
  EXPECT_EQ(NormalizePattern("/%62%2a\xC3\xA9"), "/b%2A%C3%A9");
  EXPECT_EQ(NormalizePattern("$"), "$");
}

TEST(Pattern, Rfc9309_Section2_2_3_Table) {
  struct Row {
    std::string_view rule, path;
    bool match;
  };
  for (Row r : {Row{"/", "/anything", true},
                Row{"/*", "/anything", true},
                Row{"/$", "/", true},
                Row{"/$", "/a", false},
                Row{"/fish", "/fish.html", true},
                Row{"/fish", "/Fish", false},
                Row{"/fish", "/catfish", false},
                Row{"/fish*", "/fishheads", true},
                Row{"/fish/", "/fish", false},
                Row{"/*.php", "/folder/a.php?x", true},
                Row{"/*.php$", "/a.php", true},
                Row{"/*.php$", "/a.php?x", false},
                Row{"/fish*.php", "/fishheads/catfish.php?p", true},
                Row{"/fish*.php", "/Fish.PHP", false},
                Row{"*", "/x", true},
                Row{"/a**b", "/axb", true},
                Row{"/a*$", "/abc", true},
                Row{"/a*b*c$", "/abcbc", true},
                Row{"/a*b*c$", "/acb", false},
                Row{"/a*bc", "/abbc", true},
                Row{"/ab*", "/a", false}}) {
    EXPECT_EQ(Match(r.rule, r.path), r.match) << r.rule << " vs " << r.path;
  }
}

TEST(Pattern, Harvest_AnchoredSuffixCannotOverlapPrefix) {
  EXPECT_FALSE(Match("/ab*ba$", "/aba"));
  EXPECT_TRUE(Match("/ab*ba$", "/abba"));
}

TEST(Pattern, Harvest_PriorityIsNormalizedLength) {
  EXPECT_EQ(PathPattern(NormalizePattern("/%7Efoo")).priority(), 5u);  // "/~foo"
  EXPECT_EQ(PathPattern(NormalizePattern("/a*$")).priority(), 4u);
}

}  // namespace
}  // namespace harvest::robots
