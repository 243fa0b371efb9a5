#include <gtest/gtest.h>

#include "crawl/page_processor.h"
#include "url/url.h"

namespace harvest::crawl {
namespace {

FoundLink Make(std::string_view href) {
  std::optional<url::Url> u = url::Parse(href);
  EXPECT_TRUE(u.has_value()) << href;
  return MakeFoundLink(*u);
}

TEST(FoundLinkTest, ComponentsAreViewsOfTheUrl) {
  FoundLink l = Make("https://www.example.co.uk:8443/a/b.html?x=1&y=2");
  EXPECT_EQ(l.url, "https://www.example.co.uk:8443/a/b.html?x=1&y=2");
  EXPECT_EQ(l.origin(), "https://www.example.co.uk:8443");
  EXPECT_EQ(l.host(), "www.example.co.uk");
  EXPECT_EQ(l.path(), "/a/b.html");
  EXPECT_EQ(l.query(), "x=1&y=2");
  EXPECT_EQ(l.registrable_domain(), "example.co.uk");
  EXPECT_NE(l.fp, 0u);
  // Offsets, not pointers: a copy and a move (into a grown vector) read their own string.
  std::vector<FoundLink> v;
  v.push_back(l);
  for (int i = 0; i < 100; ++i) v.push_back(Make("http://h" + std::to_string(i) + ".test/p"));
  EXPECT_EQ(v[0].host(), "www.example.co.uk");
  EXPECT_EQ(v[0].host().data(), v[0].url.data() + 8);
  EXPECT_EQ(v[100].origin(), "http://h99.test");
  EXPECT_EQ(v[100].registrable_domain(), "h99.test");
}

TEST(FoundLinkTest, NoQueryIpHostUserinfoAndTrailingDot) {
  FoundLink l = Make("http://10.0.0.1/");
  EXPECT_EQ(l.host(), "10.0.0.1");
  EXPECT_EQ(l.path(), "/");
  EXPECT_EQ(l.query(), "");
  EXPECT_EQ(l.registrable_domain(), "");
  // With userinfo the origin is not a prefix of the href: kept on its own.
  FoundLink u = Make("http://user:pw@a.example.org/x?");
  EXPECT_EQ(u.origin(), "http://a.example.org");
  EXPECT_EQ(u.host(), "a.example.org");
  EXPECT_EQ(u.registrable_domain(), "example.org");
  // A trailing dot: the registrable domain has none, so it is not a suffix of the host.
  FoundLink d = Make("http://www.example.org./");
  EXPECT_EQ(d.host(), "www.example.org.");
  EXPECT_EQ(d.registrable_domain(), "example.org");
}

// The last host's domain is reused for the next link to that host only: runs of one host,
// alternation, a host that is a suffix of the last one, and an IP after a name.
TEST(FoundLinkTest, DomainOfEachHostAcrossRunsAndAlternation) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://a.example.co.uk/1", "example.co.uk"}, {"http://a.example.co.uk/2", "example.co.uk"},
      {"http://example.co.uk/3", "example.co.uk"},   {"http://co.uk/4", ""},
      {"http://a.example.co.uk/5", "example.co.uk"}, {"http://b.example.com/6", "example.com"},
      {"http://a.example.co.uk/7", "example.co.uk"}, {"http://10.0.0.1/8", ""},
      {"http://b.example.com/9", "example.com"},     {"http://b.example.com./10", "example.com"},
      {"http://b.example.com/11", "example.com"},
  };
  for (const auto& [href, domain] : cases) {
    FoundLink l = Make(href);
    EXPECT_EQ(l.registrable_domain(), domain) << href;
    EXPECT_EQ(l.registrable_domain(), url::RegistrableDomain(l.host())) << href;
  }
}

}  // namespace
}  // namespace harvest::crawl
