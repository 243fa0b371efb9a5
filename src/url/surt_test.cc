// SURT keys and registrable domains.
#include <gtest/gtest.h>

#include <string>

#include "url/url.h"

namespace harvest::url {
namespace {

std::string SurtOf(std::string_view input) {
  std::optional<Url> u = ParseCanonical(input, nullptr);
  return u ? Surt(*u) : "failure";
}

TEST(Surt, CdxjForm) {
  EXPECT_EQ(SurtOf("http://example.com/path?a=1"), "com,example)/path?a=1");
  EXPECT_EQ(SurtOf("https://www.Example.com/A/B?B=1&a=2#frag"), "com,example)/a/b?a=2&b=1");
  EXPECT_EQ(SurtOf("http://sub.example.co.uk:8080/"), "uk,co,example,sub:8080)/");
  EXPECT_EQ(SurtOf("http://user:pw@example.com/"), "com,example)/");
  EXPECT_EQ(SurtOf("http://www2.example.com/"), "com,example,www2)/");
}

TEST(Surt, IpHostsAreNotReversed) {
  EXPECT_EQ(SurtOf("http://192.168.1.20/x"), "192.168.1.20)/x");
  EXPECT_EQ(SurtOf("http://[2001:db8::1]:81/"), "[2001:db8::1]:81)/");
}

TEST(Surt, OtherSchemesArePrefixed) {
  EXPECT_EQ(SurtOf("ftp://ftp.example.org/pub"), "ftp:org,example,ftp)/pub");
}

TEST(RegistrableDomain, PublicSuffixList) {
  EXPECT_EQ(RegistrableDomain("www.example.com"), "example.com");
  EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
  EXPECT_EQ(RegistrableDomain("example.com."), "example.com");
  EXPECT_EQ(RegistrableDomain("co.uk"), "");
  EXPECT_EQ(RegistrableDomain("192.168.0.1"), "");
  EXPECT_EQ(RegistrableDomain("[::1]"), "");
  EXPECT_EQ(RegistrableDomain(""), "");
  EXPECT_EQ(RegistrableDomain("WWW.Example.COM"), "example.com");
  // Repeated hosts (the last answer is cached per thread) and a suffix after a domain.
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
    EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
    EXPECT_EQ(RegistrableDomain("co.uk"), "");
    EXPECT_EQ(RegistrableDomain("co.uk"), "");
  }
}

// The per-thread memo (1024 slots) over far more hosts than slots, in alternation: every
// answer must be the host's own, whichever host held its slot before.
TEST(RegistrableDomain, MemoAnswersEachHostAcrossCollisions) {
  const std::string long_label(70, 'l');
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < 3000; ++i) {
      const std::string n = std::to_string(i);
      ASSERT_EQ(RegistrableDomain("w.x" + n + ".com"), "x" + n + ".com") << pass << " " << i;
      ASSERT_EQ(RegistrableDomain("W.X" + n + ".COM"), "x" + n + ".com") << pass << " " << i;
      ASSERT_EQ(RegistrableDomain("a.b" + n + ".co.uk."), "b" + n + ".co.uk") << pass << " " << i;
      ASSERT_EQ(RegistrableDomain("h" + n + ".github.io"), "h" + n + ".github.io") << i;
      ASSERT_EQ(RegistrableDomain("10.0." + std::to_string(i % 256) + ".1"), "") << i;
      ASSERT_EQ(RegistrableDomain(long_label + n + ".example.org"), "example.org") << i;
    }
  }
}

}  // namespace
}  // namespace harvest::url
