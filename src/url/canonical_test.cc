// One test per canonicalization rule of docs/canonicalization.md, plus idempotence.
#include <gtest/gtest.h>

#include <string>

#include "url/url.h"

namespace harvest::url {
namespace {

std::string Canon(std::string_view input, const CanonOptions& options = DefaultCanonOptions()) {
  std::optional<Url> u = ParseCanonical(input, nullptr, options);
  return u ? u->href() : "failure";
}

TEST(Canonicalize, LowercaseSchemeAndHost) {
  EXPECT_EQ(Canon("HTTP://WWW.Example.COM/Path"), "http://www.example.com/Path");
  EXPECT_EQ(Canon("Foo://HOST.example/P"), "foo://host.example/P");
  CanonOptions keep;
  keep.lowercase_host = false;
  EXPECT_EQ(Canon("foo://HOST/P", keep), "foo://HOST/P");
}

TEST(Canonicalize, DropDefaultPort) {
  EXPECT_EQ(Canon("http://h:80/"), "http://h/");
  EXPECT_EQ(Canon("https://h:443/"), "https://h/");
  EXPECT_EQ(Canon("https://h:80/"), "https://h:80/");
}

TEST(Canonicalize, DropFragment) {
  EXPECT_EQ(Canon("http://h/p#section"), "http://h/p");
  EXPECT_EQ(Canon("http://h/p#"), "http://h/p");
  CanonOptions keep;
  keep.drop_fragment = false;
  EXPECT_EQ(Canon("http://h/p#s%7e", keep), "http://h/p#s~");
}

TEST(Canonicalize, RemoveDotSegments) {
  EXPECT_EQ(Canon("http://h/a/./b/../c/%2E%2e/d"), "http://h/a/d");
}

TEST(Canonicalize, NormalizePercentEncoding) {
  EXPECT_EQ(Canon("http://h/%7euser/%41%2d%5F%2e%30?q=%7e%2f%2F#f"),
            "http://h/~user/A-_.0?q=~%2F%2F");
  EXPECT_EQ(Canon("http://us%65r:p%61ss@h/"), "http://user:pass@h/");
  EXPECT_EQ(Canon("sc://H%4fST/"), "sc://host/");
  EXPECT_EQ(Canon("http://h/%zz%4"), "http://h/%zz%4");  // invalid escapes stay
  // Found by url_canon_fuzzer: decoding must not form a new escape with a literal '%'.
  EXPECT_EQ(Canon("http://h/%%341"), "http://h/%%341");
  EXPECT_EQ(Canon("http://h/%4%31"), "http://h/%4%31");
  EXPECT_EQ(Canon("http://h/%%34%31"), "http://h/%4%31");
  CanonOptions off;
  off.normalize_percent_encoding = false;
  EXPECT_EQ(Canon("http://h/%7e", off), "http://h/%7e");
}

TEST(Canonicalize, SortQueryStably) {
  EXPECT_EQ(Canon("http://h/?b=2&a=1&b=1&a=0"), "http://h/?a=1&a=0&b=2&b=1");
  EXPECT_EQ(Canon("http://h/?z&y=&x=1"), "http://h/?x=1&y=&z");
  CanonOptions off;
  off.sort_query = false;
  EXPECT_EQ(Canon("http://h/?b=2&a=1", off), "http://h/?b=2&a=1");
}

TEST(Canonicalize, DropEmptyQuery) {
  EXPECT_EQ(Canon("http://h/p?"), "http://h/p");
  EXPECT_EQ(Canon("http://h/p?&&"), "http://h/p");
  CanonOptions keep;
  keep.drop_empty_query = false;
  EXPECT_EQ(Canon("http://h/p?", keep), "http://h/p?");
}

TEST(Canonicalize, DropEmptyQueryParams) {
  EXPECT_EQ(Canon("http://h/?a=1&&b=2&"), "http://h/?a=1&b=2");
}

TEST(Canonicalize, DropTrackingParams) {
  EXPECT_EQ(Canon("http://h/p?utm_source=x&id=3&UTM_Medium=y&gclid=1&fbclid=2&msclkid=3"),
            "http://h/p?id=3");
  EXPECT_EQ(Canon("http://h/p?utm%5Fsource=x&id=3"), "http://h/p?id=3");
  CanonOptions custom;
  custom.tracking_params = {"ref"};
  EXPECT_EQ(Canon("http://h/p?ref=a&utm_source=x", custom), "http://h/p?utm_source=x");
}

TEST(Canonicalize, DropSessionParams) {
  EXPECT_EQ(Canon("http://h/p?PHPSESSID=abc&page=2&sid=1&ASPSESSIONIDQQGGQGPG=x"),
            "http://h/p?page=2");
  EXPECT_EQ(Canon("http://h/p?jsessionid=1"), "http://h/p");
}

TEST(Canonicalize, DropSessionPathParams) {
  EXPECT_EQ(Canon("http://h/shop;jsessionid=A1B2/item;JSESSIONID=9?x=1"), "http://h/shop/item?x=1");
  EXPECT_EQ(Canon("http://h/a;v=1;jsessionid=2;w=3"), "http://h/a;v=1;w=3");
  // Never leaves a new dot segment behind.
  EXPECT_EQ(Canon("http://h/a/..;jsessionid=1/b"), "http://h/a/..;jsessionid=1/b");
  CanonOptions raw;
  raw.normalize_percent_encoding = false;
  EXPECT_EQ(Canon("http://h/a/%2E;jsessionid=1/b", raw), "http://h/a/%2E;jsessionid=1/b");
  CanonOptions off;
  off.drop_session_path_params = false;
  EXPECT_EQ(Canon("http://h/a;jsessionid=1", off), "http://h/a;jsessionid=1");
}

TEST(Canonicalize, DropHostTrailingDot) {
  EXPECT_EQ(Canon("http://example.com./a"), "http://example.com/a");
  EXPECT_EQ(Canon("http://example.com../a"), "http://example.com/a");
  EXPECT_EQ(Canon("http://1.2.3.4./"), "http://1.2.3.4/");
  // Found by url_canon_fuzzer: without its dots the host would become an IPv4 address.
  EXPECT_EQ(Canon("http://0x7f.0../"), "http://0x7f.0../");
}

TEST(Canonicalize, DropUserinfoIsOptional) {
  EXPECT_EQ(Canon("http://u:p@h/"), "http://u:p@h/");
  CanonOptions drop;
  drop.drop_userinfo = true;
  EXPECT_EQ(Canon("http://u:p@h/", drop), "http://h/");
}

TEST(Canonicalize, StripTrailingSlashIsOffByDefault) {
  EXPECT_EQ(Canon("http://h/a/"), "http://h/a/");
  CanonOptions on;
  on.strip_trailing_slash = true;
  EXPECT_EQ(Canon("http://h/a//", on), "http://h/a");
  EXPECT_EQ(Canon("http://h/", on), "http://h/");
}

TEST(Canonicalize, StripIndexIsOffByDefault) {
  EXPECT_EQ(Canon("http://h/a/index.html"), "http://h/a/index.html");
  CanonOptions on;
  on.strip_index = true;
  EXPECT_EQ(Canon("http://h/a/INDEX.HTML?x=1", on), "http://h/a/?x=1");
  EXPECT_EQ(Canon("http://h/a/myindex.html", on), "http://h/a/myindex.html");
}

TEST(Canonicalize, IsIdempotent) {
  CanonOptions all;
  all.strip_trailing_slash = true;
  all.strip_index = true;
  for (const char* in :
       {"HTTP://Www.EXAMPLE.com.:80/a/./b/../%7Ec/index.html;jsessionid=1?b=%41&a=&utm_x=1#f",
        "sc://H%41/p%2e?", "mailto:X%41@Example.COM?b&a", "file:///C:/a/%2e/b?",
        "http://h/a/..;jsessionid=1/b"}) {
    for (const CanonOptions* o : {&DefaultCanonOptions(), static_cast<const CanonOptions*>(&all)}) {
      std::optional<Url> once = ParseCanonical(in, nullptr, *o);
      ASSERT_TRUE(once) << in;
      std::optional<Url> twice = ParseCanonical(once->href(), nullptr, *o);
      ASSERT_TRUE(twice) << once->href();
      EXPECT_EQ(twice->href(), once->href()) << in;
    }
  }
}

TEST(Canonicalize, ResolvesAgainstBase) {
  std::optional<Url> base = Parse("https://Example.com/dir/page.html?x=1");
  ASSERT_TRUE(base);
  std::optional<Url> u = ParseCanonical("../other?utm_campaign=z&b=2&a=1#top", &*base);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->href(), "https://example.com/other?a=1&b=2");
  EXPECT_FALSE(ParseCanonical("http://exa mple/", nullptr));
}

}  // namespace
}  // namespace harvest::url
