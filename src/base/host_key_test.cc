#include "base/host_key.h"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

namespace harvest {
namespace {

struct KeyCase {
  std::string_view key;
  std::string_view scheme, name, port;
};

void ExpectSplits(const KeyCase& c) {
  SCOPED_TRACE(c.key);
  const HostKeyParts p = SplitHostKey(c.key);
  EXPECT_EQ(p.scheme, c.scheme);
  EXPECT_EQ(p.name, c.name);
  EXPECT_EQ(p.port, c.port);
  EXPECT_EQ(NameOfHostKey(c.key), c.name);
}

TEST(HostKey, SplitsSchemeNameAndPort) {
  constexpr KeyCase kCases[] = {
      {"https://a.test:8443", "https", "a.test", "8443"},
      {"http://a.test", "http", "a.test", ""},
      {"http://A.Test:80", "http", "A.Test", "80"},  // as written: callers lower it
      {"HTTP://WWW.Example.COM", "HTTP", "WWW.Example.COM", ""},
      {"http://[::1]:8080", "http", "[::1]", "8080"},
      {"http://[::1]", "http", "[::1]", ""},
      {"http://[2001:db8::7]:1", "http", "[2001:db8::7]", "1"},
      {"http://a.test:", "http", "a.test", ""},
      // A bare name without a scheme.
      {"a.test:8080", "", "a.test", "8080"},
      {"a.test", "", "a.test", ""},
      {"[::1]:80", "", "[::1]", "80"},
      {"", "", "", ""},
      // Malformed names stay whole.
      {"::1", "", "::1", ""},                     // a bare IPv6 address: no port
      {"http://a:b:c", "http", "a:b:c", ""},      // more than one ':' and no brackets
      {"http://[::1", "http", "[::1", ""},        // no closing bracket
      {"http://[::1]x:80", "http", "[::1]", ""},  // nothing after "]x" is a port
  };
  for (const KeyCase& c : kCases) ExpectSplits(c);
}

TEST(HostKey, AuthorityIgnoresSchemes) {
  EXPECT_EQ(NameOfAuthority("a.test:80"), "a.test");
  EXPECT_EQ(NameOfAuthority("[::1]:80"), "[::1]");
  // A Host header is never read as a key with a scheme: no "localhost" out of this.
  EXPECT_EQ(NameOfAuthority("evil.test://localhost"), "evil.test");
  EXPECT_EQ(SplitAuthority("evil.test://localhost").scheme, "");
}

TEST(HostKey, AuthorityOfUrl) {
  constexpr std::pair<std::string_view, std::string_view> kCases[] = {
      {"http://a.test:8080/x?y", "a.test:8080"},
      {"https://u:p@b.test/", "b.test"},
      {"http://c.test", "c.test"},
      {"http://C.Test?q#f", "C.Test"},  // case as written
      {"http://[::1]:81#f", "[::1]:81"},
      {"http://a@b@c.test/", "c.test"},
      {"no-scheme", ""},
      {"http:///path", ""},
  };
  for (const auto& [url, authority] : kCases) EXPECT_EQ(AuthorityOfUrl(url), authority) << url;
}

TEST(HostKey, Unbracket) {
  constexpr std::pair<std::string_view, std::string_view> kCases[] = {
      {"[::1]", "::1"}, {"a.test", "a.test"}, {"[::1", "[::1"}, {"[]", ""}, {"[", "["},
  };
  for (const auto& [in, out] : kCases) EXPECT_EQ(Unbracket(in), out) << in;
  EXPECT_EQ(Unbracket(NameOfHostKey("http://[::1]:8080")), "::1");
}

}  // namespace
}  // namespace harvest
