// Tests of RobotsRules: RFC 9309 behaviour (Rfc9309_*), google/robotstxt behaviour beyond the
// RFC (GoogleLib_*), and Harvest's own choices (Harvest_*).
#include "robots/robots.h"

#include <gtest/gtest.h>

#include <string>

namespace harvest::robots {
namespace {

bool Allowed(std::string_view body, std::string_view agent, std::string_view path) {
  return RobotsRules::Parse(body).IsAllowed(agent, path);
}

// RFC 9309 §5.1, verbatim (including the trailing "EOF" line of the figure).
constexpr std::string_view kRfcSimpleExample =
    "User-Agent: *\n"
    "Disallow: *.gif$\n"
    "Disallow: /example/\n"
    "Allow: /publications/\n"
    "\n"
    "User-Agent: foobot\n"
    "Disallow:/\n"
    "Allow:/example/page.html\n"
    "Allow:/example/allowed.gif\n"
    "\n"
    "User-Agent: barbot\n"
    "User-Agent: bazbot\n"
    "Disallow: /example/page.html\n"
    "\n"
    "User-Agent: quxbot\n"
    "\n"
    "EOF\n";

TEST(RobotsRules, Rfc9309_Section5_1_WildcardGroup) {
  RobotsRules rules = RobotsRules::Parse(kRfcSimpleExample);
  EXPECT_FALSE(rules.IsAllowed("otherbot", "/example/page.html"));
  EXPECT_FALSE(rules.IsAllowed("otherbot", "/images/cat.gif"));
  EXPECT_TRUE(rules.IsAllowed("otherbot", "/images/cat.gif?size=2"));  // `$` anchors
  EXPECT_TRUE(rules.IsAllowed("otherbot", "/publications/"));
  EXPECT_TRUE(rules.IsAllowed("otherbot", "/publications/chart.gif"));  // longer Allow wins
  EXPECT_TRUE(rules.IsAllowed("otherbot", "/"));
}

TEST(RobotsRules, Rfc9309_Section5_1_Foobot) {
  RobotsRules rules = RobotsRules::Parse(kRfcSimpleExample);
  EXPECT_TRUE(rules.IsAllowed("foobot", "/example/page.html"));
  EXPECT_TRUE(rules.IsAllowed("foobot", "/example/allowed.gif"));
  EXPECT_FALSE(rules.IsAllowed("foobot", "/"));
  EXPECT_FALSE(rules.IsAllowed("foobot", "/publications/"));
  EXPECT_FALSE(rules.IsAllowed("foobot", "/example/other.html"));
}

TEST(RobotsRules, Rfc9309_Section5_1_GroupWithSeveralAgents) {
  RobotsRules rules = RobotsRules::Parse(kRfcSimpleExample);
  for (std::string_view bot : {"barbot", "bazbot"}) {
    EXPECT_FALSE(rules.IsAllowed(bot, "/example/page.html")) << bot;
    EXPECT_TRUE(rules.IsAllowed(bot, "/example/other.html")) << bot;  // `*` does not apply
    EXPECT_TRUE(rules.IsAllowed(bot, "/images/cat.gif")) << bot;
  }
}

TEST(RobotsRules, Rfc9309_Section5_1_EmptyGroupAllowsAll) {
  RobotsRules rules = RobotsRules::Parse(kRfcSimpleExample);
  EXPECT_TRUE(rules.IsAllowed("quxbot", "/example/page.html"));
  EXPECT_TRUE(rules.IsAllowed("quxbot", "/images/cat.gif"));
}

TEST(RobotsRules, Rfc9309_Section5_2_LongestMatch) {
  constexpr std::string_view kBody =
      "User-Agent: foobot\n"
      "Allow: /example/page/\n"
      "Disallow: /example/page/disallowed.gif\n";
  EXPECT_TRUE(Allowed(kBody, "foobot", "/example/page/"));
  EXPECT_TRUE(Allowed(kBody, "foobot", "/example/page/allowed.gif"));
  EXPECT_FALSE(Allowed(kBody, "foobot", "/example/page/disallowed.gif"));
  MatchResult r = RobotsRules::Parse(kBody).Check("foobot", "/example/page/disallowed.gif");
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.rule, "Disallow: /example/page/disallowed.gif");
}

TEST(RobotsRules, Rfc9309_LongestMatchIndependentOfOrder) {
  EXPECT_TRUE(Allowed("User-agent: *\nAllow: /a/b\nDisallow: /a\n", "x", "/a/b/c"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a\nAllow: /a/b\n", "x", "/a/b/c"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a/b\nAllow: /a\n", "x", "/a/b/c"));
}

TEST(RobotsRules, Rfc9309_AllowWinsTie) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /page\nAllow: /page\n", "x", "/page"));
  EXPECT_TRUE(Allowed("User-agent: *\nAllow: /page\nDisallow: /page\n", "x", "/page"));
  // Equal length with wildcards: "/*.htm" and "/page." are both 6 octets.
  MatchResult r = RobotsRules::Parse("User-agent: *\nDisallow: /*.htm\nAllow: /page.\n")
                      .Check("x", "/page.htm");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.line, 3);
}

TEST(RobotsRules, Rfc9309_Section2_2_2_EmptyDisallowAllowsAll) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow:\n", "x", "/anything"));
  MatchResult r = RobotsRules::Parse("User-agent: *\nDisallow:\n").Check("x", "/a");
  EXPECT_EQ(r.line, 0);
  EXPECT_EQ(r.rule, "");
}

TEST(RobotsRules, Rfc9309_Section2_2_3_Wildcards) {
  constexpr std::string_view kBody =
      "User-agent: *\nDisallow: /foo/*/qux\nDisallow: /*.php$\nDisallow: /fish*.html\n";
  EXPECT_FALSE(Allowed(kBody, "x", "/foo/bar/qux"));
  EXPECT_FALSE(Allowed(kBody, "x", "/foo//qux"));
  EXPECT_FALSE(Allowed(kBody, "x", "/foo/a/b/qux/more"));
  EXPECT_TRUE(Allowed(kBody, "x", "/foo/qux"));
  EXPECT_FALSE(Allowed(kBody, "x", "/index.php"));
  EXPECT_TRUE(Allowed(kBody, "x", "/index.php?x=1"));
  EXPECT_TRUE(Allowed(kBody, "x", "/index.php5"));
  EXPECT_FALSE(Allowed(kBody, "x", "/fish.html"));
  EXPECT_FALSE(Allowed(kBody, "x", "/fishheads/salmon.html?x"));
  EXPECT_TRUE(Allowed(kBody, "x", "/Fish.html"));  // paths are case-sensitive
}

TEST(RobotsRules, Rfc9309_Section2_2_3_DollarAnchorsEnd) {
  constexpr std::string_view kBody = "User-agent: *\nDisallow: /$\nAllow: /a$\n";
  EXPECT_FALSE(Allowed(kBody, "x", "/"));
  EXPECT_TRUE(Allowed(kBody, "x", "/index.html"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a*b$\n", "x", "/axxb"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a*b$\n", "x", "/axxbc"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a*b$\n", "x", "/abcb"));
}

TEST(RobotsRules, Rfc9309_Section2_2_2_PercentEncoding) {
  // RFC 9309 Figure 5/6 rows: (rule, path) pairs that must match.
  struct Row {
    std::string_view rule, path;
  };
  for (Row row :
       {Row{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
        Row{"/foo/bar/\xE3\x83\x84", "/foo/bar/%E3%83%84"},
        Row{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
        Row{"/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"}, Row{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
        Row{"/foo/bar/baz", "/foo/bar/%62%61%7a"},
        Row{"/path/file-with-a-%2A.html", "/path/file-with-a-*.html"},
        Row{"/path/file-with-a-%2A.html", "/path/file-with-a-%2a.html"},
        Row{"/path/foo-%24", "/path/foo-$"}, Row{"/path/a$b", "/path/a$b"},
        Row{"/path/a$b", "/path/a%24b"}, Row{"/%7ejoe/", "/~joe/index.html"}}) {
    std::string body = "User-agent: *\nDisallow: " + std::string(row.rule) + "\n";
    EXPECT_FALSE(Allowed(body, "x", row.path)) << row.rule << " vs " << row.path;
  }
  // Escapes are not wildcards or anchors, and reserved escapes stay distinct.
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "x",
                      "/path/file-with-a-x.html"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /path/foo-%24\n", "x", "/path/foo-"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a%2Fb\n", "x", "/a/b"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a/b\n", "x", "/a%2Fb"));
}

TEST(RobotsRules, Rfc9309_Section2_2_2_RobotsTxtAlwaysAllowed) {
  RobotsRules rules = RobotsRules::Parse("User-agent: *\nDisallow: /\n");
  EXPECT_TRUE(rules.IsAllowed("x", "/robots.txt"));
  EXPECT_TRUE(rules.Check("x", "/robots.txt").allowed);
  EXPECT_FALSE(rules.IsAllowed("x", "/robots.txt.bak"));
  EXPECT_TRUE(RobotsRules::DisallowAll().IsAllowed("x", "/robots.txt"));
}

TEST(RobotsRules, Rfc9309_Section2_2_1_ProductTokenCaseInsensitive) {
  constexpr std::string_view kBody = "User-agent: FooBot\nDisallow: /\n";
  EXPECT_FALSE(Allowed(kBody, "foobot", "/x"));
  EXPECT_FALSE(Allowed(kBody, "FOOBOT", "/x"));
  EXPECT_TRUE(Allowed(kBody, "foobo", "/x"));
  EXPECT_TRUE(Allowed(kBody, "foobotx", "/x"));
}

TEST(RobotsRules, Rfc9309_Section2_2_1_StarOnlyWhenNoSpecificGroup) {
  constexpr std::string_view kBody =
      "User-agent: *\nDisallow: /\n\nUser-agent: foobot\nDisallow: /private\n";
  EXPECT_TRUE(Allowed(kBody, "foobot", "/public"));
  EXPECT_FALSE(Allowed(kBody, "foobot", "/private"));
  EXPECT_FALSE(Allowed(kBody, "barbot", "/public"));
}

TEST(RobotsRules, Rfc9309_Section2_2_1_GroupsForSameAgentMerged) {
  constexpr std::string_view kBody =
      "User-agent: foobot\nDisallow: /a\n\nUser-agent: barbot\nDisallow: /b\n\n"
      "User-agent: FooBot\nDisallow: /c\nAllow: /a/open\n";
  RobotsRules rules = RobotsRules::Parse(kBody);
  EXPECT_FALSE(rules.IsAllowed("foobot", "/a"));
  EXPECT_TRUE(rules.IsAllowed("foobot", "/b"));
  EXPECT_FALSE(rules.IsAllowed("foobot", "/c"));
  EXPECT_TRUE(rules.IsAllowed("foobot", "/a/open"));  // longest across merged groups
  EXPECT_FALSE(rules.IsAllowed("barbot", "/b"));
  EXPECT_TRUE(rules.IsAllowed("barbot", "/a"));
}

TEST(RobotsRules, Rfc9309_Section2_1_RulesBeforeUserAgentIgnored) {
  EXPECT_TRUE(Allowed("Disallow: /\nUser-agent: *\nDisallow: /x\n", "a", "/y"));
  EXPECT_TRUE(Allowed("Disallow: /\n", "a", "/y"));
}

TEST(RobotsRules, Rfc9309_Section2_2_4_SitemapAnywhereNotEndingGroup) {
  constexpr std::string_view kBody =
      "Sitemap: https://a.test/s1.xml\n"
      "User-agent: foobot\n"
      "Sitemap: https://a.test/s2.xml\n"
      "User-agent: barbot\n"
      "Disallow: /x\n"
      "sitemap: https://a.test/s1.xml\n";
  RobotsRules rules = RobotsRules::Parse(kBody);
  EXPECT_EQ(rules.Sitemaps(),
            (std::vector<std::string>{"https://a.test/s1.xml", "https://a.test/s2.xml"}));
  EXPECT_FALSE(rules.IsAllowed("foobot", "/x"));  // foobot and barbot share the group
  EXPECT_FALSE(rules.IsAllowed("barbot", "/x"));
}

TEST(RobotsRules, Rfc9309_Section2_2_CommentsAndLineEnds) {
  for (std::string_view eol : {"\n", "\r", "\r\n"}) {
    std::string body = "# comment" + std::string(eol) + "User-agent: foobot # us" +
                       std::string(eol) + "Disallow: /a # not /b" + std::string(eol) +
                       "Disallow: /c";
    RobotsRules rules = RobotsRules::Parse(body);
    EXPECT_FALSE(rules.IsAllowed("foobot", "/a")) << int(eol[0]);
    EXPECT_TRUE(rules.IsAllowed("foobot", "/b")) << int(eol[0]);
    MatchResult r = rules.Check("foobot", "/c");
    EXPECT_FALSE(r.allowed);
    EXPECT_EQ(r.line, 4) << int(eol[0]);
  }
}

TEST(RobotsRules, Rfc9309_Section2_5_ParseLimit500KiB) {
  std::string body = "User-agent: *\nDisallow: /early\n";
  body.append(kMaxRobotsBytes - body.size(), '#');
  body += "\nDisallow: /late\n";  // starts past the limit
  RobotsRules rules = RobotsRules::Parse(body);
  EXPECT_FALSE(rules.IsAllowed("x", "/early"));
  EXPECT_TRUE(rules.IsAllowed("x", "/late"));
}

TEST(RobotsRules, Harvest_LineCutByLimitIsDropped) {
  std::string body = "User-agent: *\nDisallow: /\n";
  body.append(kMaxRobotsBytes - body.size() - 10, '\n');
  body += "Allow: /abcdefgh\n";  // the limit falls inside this line
  RobotsRules rules = RobotsRules::Parse(body);
  EXPECT_FALSE(rules.IsAllowed("x", "/ab"));  // truncated "Allow: /ab" must not apply
  EXPECT_FALSE(rules.IsAllowed("x", "/abcdefgh"));
}

TEST(RobotsRules, Harvest_BomSkipped) {
  EXPECT_FALSE(Allowed("\xEF\xBB\xBFUser-agent: *\nDisallow: /\n", "x", "/a"));
  EXPECT_TRUE(Allowed("\xEF\xBB\xBF", "x", "/a"));
}

TEST(RobotsRules, GoogleLib_UserAgentValueIsProductTokenPrefix) {
  // google/robotstxt compares the user-agent value up to the first char not in [A-Za-z_-].
  EXPECT_FALSE(Allowed("User-agent: FooBot/1.2\nDisallow: /\n", "foobot", "/x"));
  EXPECT_FALSE(Allowed("User-agent: foobot bar\nDisallow: /\n", "foobot", "/x"));
  EXPECT_TRUE(Allowed("User-agent: foo-bot\nDisallow: /\n", "foobot", "/x"));
  EXPECT_FALSE(Allowed("User-agent: foo_bot-x\nDisallow: /\n", "Foo_Bot-X", "/x"));
  // The caller's token is reduced the same way.
  EXPECT_FALSE(Allowed("User-agent: foobot\nDisallow: /\n", "FooBot/2.1", "/x"));
}

TEST(RobotsRules, GoogleLib_StarFollowedBySpaceIsGlobal) {
  EXPECT_FALSE(Allowed("User-agent: * # all\nDisallow: /\n", "x", "/a"));
  EXPECT_TRUE(Allowed("User-agent: *bot\nDisallow: /\n", "x", "/a"));
}

TEST(RobotsRules, GoogleLib_UserAgentAfterRulesStartsNewGroup) {
  constexpr std::string_view kBody = "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n";
  EXPECT_TRUE(Allowed(kBody, "a", "/y"));
  EXPECT_TRUE(Allowed(kBody, "b", "/x"));
  // Blank lines and unknown lines do not end a group.
  EXPECT_FALSE(Allowed("User-agent: a\n\nfoo: bar\nUser-agent: b\nDisallow: /x\n", "a", "/x"));
}

TEST(RobotsRules, GoogleLib_MissingColon) {
  EXPECT_FALSE(Allowed("User-agent *\nDisallow /path\n", "x", "/path/a"));
  EXPECT_TRUE(Allowed("User-agent *\nDisallow /path\n", "x", "/other"));
  // Three words: ambiguous, ignored.
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow /a /b\n", "x", "/a"));
}

TEST(RobotsRules, GoogleLib_FrequentTypos) {
  for (std::string_view ua : {"User-agent", "useragent", "user agent", "USER-AGENT"}) {
    for (std::string_view dis :
         {"Disallow", "disalow", "dissallow", "dissalow", "diasllow", "disallaw", "DISALLOW"}) {
      std::string body = std::string(ua) + ": foobot\n" + std::string(dis) + ": /x\n";
      EXPECT_FALSE(Allowed(body, "foobot", "/x")) << body;
    }
  }
  EXPECT_EQ(RobotsRules::Parse("site-map: https://a.test/s.xml\n").Sitemaps().size(), 1u);
}

TEST(RobotsRules, GoogleLib_NonFinalDollarIsLiteral) {
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a$b\n", "x", "/a$bc"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a$b\n", "x", "/ab"));
}

TEST(RobotsRules, GoogleLib_PatternWithoutSlashMatchesOnlyViaWildcard) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: private\n", "x", "/private"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: *private\n", "x", "/private"));
}

TEST(RobotsRules, GoogleLib_IndexHtmlAllowsDirectory) {
  constexpr std::string_view kBody =
      "User-agent: *\nDisallow: /\nAllow: /dir/index.html\nAllow: /b/index.htm\n";
  RobotsRules rules = RobotsRules::Parse(kBody);
  EXPECT_TRUE(rules.IsAllowed("x", "/dir/"));
  EXPECT_TRUE(rules.IsAllowed("x", "/dir/index.html"));
  EXPECT_FALSE(rules.IsAllowed("x", "/dir/other.html"));
  EXPECT_TRUE(rules.IsAllowed("x", "/b/"));
  EXPECT_EQ(rules.Check("x", "/dir/").line, 3);
}

TEST(RobotsRules, Harvest_SpaceAndControlsEncodedOnBothSides) {
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a b\n", "x", "/a%20b"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /a%20b\n", "x", "/a b"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a b\n", "x", "/a+b"));
}

TEST(RobotsRules, Harvest_CheckReportsRuleAndLine) {
  constexpr std::string_view kBody =
      "# header\nUser-agent: harvest\nAllow: /private/ok\nDisallow: /private/\n";
  RobotsRules rules = RobotsRules::Parse(kBody);
  MatchResult r = rules.Check("harvest", "/private/x");
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.line, 4);
  EXPECT_EQ(r.rule, "Disallow: /private/");
  r = rules.Check("harvest", "/private/ok");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.rule, "Allow: /private/ok");
  r = rules.Check("harvest", "/public");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.line, 0);
  EXPECT_EQ(r.rule, "");
}

TEST(RobotsRules, Harvest_FragmentIgnoredEmptyPathIsRoot) {
  RobotsRules rules = RobotsRules::Parse("User-agent: *\nDisallow: /$\nDisallow: /a$\n");
  EXPECT_FALSE(rules.IsAllowed("x", ""));
  EXPECT_FALSE(rules.IsAllowed("x", "/a#frag"));
}

TEST(RobotsRules, Harvest_CrawlDelay) {
  constexpr std::string_view kBody =
      "User-agent: *\nCrawl-delay: 0.5\n\n"
      "User-agent: slow\nCrawl-delay: 10\nDisallow: /x\n\n"
      "User-agent: bad\nCrawl-delay: soon\n\n"
      "User-agent: neg\nCrawl-delay: -3\n\n"
      "User-agent: slow\nCrawl-delay: 2\n\n"
      "User-agent: huge\nCrawl-delay: 99999999999999999999\n\n"
      "User-agent: none\nDisallow: /y\n";
  RobotsRules rules = RobotsRules::Parse(kBody);
  using std::chrono::milliseconds;
  EXPECT_EQ(rules.CrawlDelay("other"), milliseconds(500));
  EXPECT_EQ(rules.CrawlDelay("slow"), milliseconds(10000));  // largest of merged groups
  EXPECT_EQ(rules.CrawlDelay("bad"), std::nullopt);
  EXPECT_EQ(rules.CrawlDelay("neg"), std::nullopt);
  EXPECT_EQ(rules.CrawlDelay("huge"), kMaxCrawlDelay);
  EXPECT_EQ(rules.CrawlDelay("none"), std::nullopt);  // its own group, not `*`
  EXPECT_FALSE(rules.IsAllowed("slow", "/x"));
  EXPECT_EQ(RobotsRules::Parse("User-agent: *\nCrawl-delay: .25\n").CrawlDelay("x"),
            milliseconds(250));
  EXPECT_EQ(RobotsRules::Parse("User-agent: *\nCrawl-delay: 1.5s\n").CrawlDelay("x"), std::nullopt);
  EXPECT_EQ(RobotsRules::Parse("").CrawlDelay("x"), std::nullopt);
}

TEST(RobotsRules, Harvest_AllowAllDisallowAll) {
  EXPECT_TRUE(RobotsRules::AllowAll().IsAllowed("x", "/a"));
  EXPECT_TRUE(RobotsRules().IsAllowed("x", "/a"));
  MatchResult r = RobotsRules::DisallowAll().Check("x", "/a");
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.line, 0);
  EXPECT_NE(r.rule.find("Disallow: /"), std::string::npos);
  EXPECT_FALSE(RobotsRules::DisallowAll().temporary());
}

TEST(RobotsRules, Harvest_MemoryBytesGrowsWithRules) {
  size_t small = RobotsRules::Parse("User-agent: *\nDisallow: /a\n").memory_bytes();
  std::string big = "User-agent: *\n";
  for (int i = 0; i < 100; ++i) big += "Disallow: /path/number/" + std::to_string(i) + "\n";
  RobotsRules rules = RobotsRules::Parse(big);
  EXPECT_GT(rules.memory_bytes(), small + 100 * 20);
  EXPECT_EQ(rules.rule_count(), 100u);
}

TEST(RobotsRules, Harvest_WildcardIsNotExponential) {
  std::string pattern = "/";
  for (int i = 0; i < 2000; ++i) pattern += "a*";
  pattern += "b";
  std::string path = "/" + std::string(20000, 'a');
  RobotsRules rules = RobotsRules::Parse("User-agent: *\nDisallow: " + pattern + "\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(rules.IsAllowed("x", path));
  EXPECT_FALSE(rules.IsAllowed("x", path + "b"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

TEST(FromFetch, Rfc9309_Section2_3_1_StatusPolicy) {
  constexpr std::string_view kBody = "User-agent: *\nDisallow: /x\n";
  RobotsRules ok = FromFetch(200, kBody);
  EXPECT_FALSE(ok.IsAllowed("a", "/x"));
  EXPECT_FALSE(ok.temporary());
  for (int status : {400, 401, 403, 404, 410, 451}) {
    RobotsRules r = FromFetch(status, kBody);
    EXPECT_TRUE(r.IsAllowed("a", "/x")) << status;
    EXPECT_FALSE(r.temporary()) << status;
  }
  for (int status : {0, 429, 500, 503, 599}) {
    RobotsRules r = FromFetch(status, kBody);
    EXPECT_FALSE(r.IsAllowed("a", "/x")) << status;
    EXPECT_FALSE(r.IsAllowed("a", "/")) << status;
    EXPECT_TRUE(r.temporary()) << status;
    EXPECT_TRUE(r.IsAllowed("a", "/robots.txt")) << status;
  }
}

TEST(FromFetch, Rfc9309_Section2_3_1_2_Redirects) {
  constexpr std::string_view kBody = "User-agent: *\nDisallow: /x\n";
  EXPECT_FALSE(FromFetch(200, kBody, 5).IsAllowed("a", "/x"));
  EXPECT_TRUE(FromFetch(200, kBody, 6).IsAllowed("a", "/x"));  // too many hops: unavailable
  EXPECT_TRUE(FromFetch(301, "", 0).IsAllowed("a", "/x"));     // unfollowed redirect
  EXPECT_FALSE(FromFetch(301, "", 6).temporary());
}

TEST(FromFetch, Harvest_UnexpectedStatusIsTemporaryDisallow) {
  for (int status : {-1, 100, 600, 999}) {
    RobotsRules r = FromFetch(status, "");
    EXPECT_FALSE(r.IsAllowed("a", "/x")) << status;
    EXPECT_TRUE(r.temporary()) << status;
  }
  MatchResult m = FromFetch(503, "").Check("a", "/x");
  EXPECT_NE(m.rule.find("503"), std::string::npos);
  EXPECT_EQ(m.line, 0);
}

TEST(ProductToken, Harvest_ExtractsLeadingToken) {
  EXPECT_EQ(ProductToken("Harvest/0.1 (+https://x)"), "harvest");
  EXPECT_EQ(ProductToken("  FooBot"), "foobot");
  EXPECT_EQ(ProductToken("Mozilla/5.0 (compatible; Googlebot/2.1)"), "mozilla");
  EXPECT_EQ(ProductToken(""), "");
}

}  // namespace
}  // namespace harvest::robots
