// Parser edge cases beyond the WPT data: accessors, bases, limits and hostile input.
#include <gtest/gtest.h>

#include <string>

#include "url/url.h"

namespace harvest::url {
namespace {

std::string Href(std::string_view input, std::string_view base = {}) {
  std::optional<Url> b;
  if (!base.empty()) b = Parse(base);
  std::optional<Url> u = Parse(input, b ? &*b : nullptr);
  return u ? u->href() : "failure";
}

TEST(UrlParser, Accessors) {
  std::optional<Url> u = Parse("HTTPS://user:pa%20ss@Example.COM:8443/a/./b/../c?q=1#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->href(), "https://user:pa%20ss@example.com:8443/a/c?q=1#frag");
  EXPECT_EQ(u->scheme(), "https");
  EXPECT_EQ(u->username(), "user");
  EXPECT_EQ(u->password(), "pa%20ss");
  EXPECT_EQ(u->host(), "example.com");
  EXPECT_EQ(u->port(), 8443);
  EXPECT_EQ(u->path(), "/a/c");
  EXPECT_TRUE(u->has_query());
  EXPECT_EQ(u->query(), "q=1");
  EXPECT_TRUE(u->has_fragment());
  EXPECT_EQ(u->fragment(), "frag");
  EXPECT_EQ(u->path_and_query(), "/a/c?q=1");
  EXPECT_EQ(u->origin_key(), "https://example.com:8443");
  EXPECT_TRUE(u->is_special());
}

TEST(UrlParser, DefaultPortIsDropped) {
  std::optional<Url> u = Parse("http://example.com:80/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port(), -1);
  EXPECT_EQ(u->href(), "http://example.com/");
  EXPECT_EQ(u->origin_key(), "http://example.com");
}

TEST(UrlParser, EmptyQueryAndFragmentAreDistinctFromNone) {
  std::optional<Url> u = Parse("http://h/p?#");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->has_query());
  EXPECT_EQ(u->query(), "");
  EXPECT_TRUE(u->has_fragment());
  EXPECT_EQ(u->path_and_query(), "/p?");
  std::optional<Url> v = Parse("http://h/p");
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->has_query());
  EXPECT_FALSE(v->has_fragment());
  EXPECT_EQ(v->path_and_query(), "/p");
}

TEST(UrlParser, RelativeResolution) {
  const char* base = "http://a/b/c/d;p?q";
  // RFC 3986 §5.4.1 normal examples (WHATWG agrees on these).
  EXPECT_EQ(Href("g", base), "http://a/b/c/g");
  EXPECT_EQ(Href("./g", base), "http://a/b/c/g");
  EXPECT_EQ(Href("g/", base), "http://a/b/c/g/");
  EXPECT_EQ(Href("/g", base), "http://a/g");
  EXPECT_EQ(Href("//g", base), "http://g/");
  EXPECT_EQ(Href("?y", base), "http://a/b/c/d;p?y");
  EXPECT_EQ(Href("#s", base), "http://a/b/c/d;p?q#s");
  EXPECT_EQ(Href("", base), "http://a/b/c/d;p?q");
  EXPECT_EQ(Href("../../../g", base), "http://a/g");
  EXPECT_EQ(Href("g;x=1/../y", base), "http://a/b/c/y");
}

TEST(UrlParser, UserinfoWithUserinfoOriginKey) {
  std::optional<Url> u = Parse("ftp://me:pw@ftp.example.org:2121/file");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->origin_key(), "ftp://ftp.example.org:2121");
  Url copy = *u;
  EXPECT_EQ(copy.origin_key(), "ftp://ftp.example.org:2121");
}

TEST(UrlParser, OpaquePath) {
  std::optional<Url> u = Parse("mailto:Someone@Example.com?subject=hi");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->has_opaque_path());
  EXPECT_FALSE(u->has_host());
  EXPECT_EQ(u->path(), "Someone@Example.com");
  EXPECT_EQ(u->query(), "subject=hi");
  EXPECT_EQ(Href("x", "mailto:a"), "failure");
  EXPECT_EQ(Href("#x", "mailto:a"), "mailto:a#x");
}

TEST(UrlParser, Hosts) {
  EXPECT_EQ(Href("http://0x7f.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Href("http://[0:0::1]/"), "http://[::1]/");
  EXPECT_EQ(Href("http://[1:0:0:2::3:0]/"), "http://[1::2:0:0:3:0]/");
  EXPECT_EQ(Href("http://[::ffff:192.168.0.1]/"), "http://[::ffff:c0a8:1]/");
  EXPECT_EQ(Href("http://256.256.256.256/"), "failure");
  EXPECT_EQ(Href("http://a b/"), "failure");
  EXPECT_EQ(Href("http://exa%41mple.com/"), "http://exaample.com/");
  EXPECT_EQ(Href("http://münchen.de/"), "http://xn--mnchen-3ya.de/");
  EXPECT_EQ(Href("http://MÜNCHEN.de/"), "http://xn--mnchen-3ya.de/");
  EXPECT_EQ(Href("http://faß.de/"), "http://xn--fa-hia.de/");  // non-transitional
  EXPECT_EQ(Href("http://example。com/"), "http://example.com/");
  EXPECT_EQ(Href("http:///"), "failure");
  EXPECT_EQ(Href("sc://EXAMPLE/"), "sc://EXAMPLE/");  // opaque hosts keep their case
  EXPECT_EQ(Href("http://h:65536/"), "failure");
  EXPECT_EQ(Href("http://h:99999999999999999999/"), "failure");
}

TEST(UrlParser, WhitespaceAndControls) {
  EXPECT_EQ(Href("  \thttp://h/a\nb\r \x01"), "http://h/ab");
  EXPECT_EQ(Href(std::string("http://h/\0x", 11)), "http://h/%00x");
  EXPECT_EQ(Href("http://h/ä ö"), "http://h/%C3%A4%20%C3%B6");
  EXPECT_EQ(Href("http://h/\xff"), "http://h/%FF");  // invalid UTF-8 kept as bytes
  EXPECT_EQ(Href("http://\xff/"), "failure");
}

TEST(UrlParser, NoSchemeWithoutBaseFails) {
  EXPECT_EQ(Href("/just/a/path"), "failure");
  EXPECT_EQ(Href(""), "failure");
  EXPECT_EQ(Href(":"), "failure");
}

TEST(UrlParser, FileUrls) {
  EXPECT_EQ(Href("file:///C|/x/../../y"), "file:///C:/y");
  EXPECT_EQ(Href("file://localhost/etc"), "file:///etc");
  EXPECT_EQ(Href("/x", "file:///C:/a/b"), "file:///C:/x");
}

TEST(UrlParser, InputLimit) {
  std::string big = "http://h/" + std::string(kMaxInputBytes, 'a');
  EXPECT_FALSE(Parse(big));
  std::string ok = "http://h/" + std::string(100000, 'a');
  EXPECT_TRUE(Parse(ok));
}

TEST(UrlParser, SerializationIsIdempotent) {
  for (const char* in : {"http://h/a/%2e%2E/b", "sc:/..//p", "file:C|", "web+x:////a",
                         "http://[::1]:8080/?#", "non-spec:/.//p"}) {
    std::optional<Url> u = Parse(in);
    ASSERT_TRUE(u) << in;
    std::optional<Url> v = Parse(u->href());
    ASSERT_TRUE(v) << u->href();
    EXPECT_EQ(v->href(), u->href()) << in;
  }
}

}  // namespace
}  // namespace harvest::url
