#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "store/internal.h"
#include "store/store.h"

namespace harvest::store {
namespace {

TEST(WarcDate, MicrosecondPrecision) {
  // 2026-11-26T03:20:01.123456Z
  EXPECT_EQ(WarcDate(1795663201123456), "2026-11-26T03:20:01.123456Z");
  EXPECT_EQ(WarcDate(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(Timestamp14(1795663201123456), "20261126032001");
  EXPECT_EQ(internal::Timestamp14FromWarcDate("2026-11-26T03:20:01.123456Z"), "20261126032001");
  EXPECT_EQ(internal::Timestamp14FromWarcDate("2026-11-26T03:20:01Z"), "20261126032001");
  EXPECT_EQ(internal::Timestamp14FromWarcDate("garbage"), "");
}

// The byte-at-a-time rule AppendSafe implements (16 bytes a step): controls, DEL and (in a
// URI) the space become %XX with upper-case hex; every other byte, >= 0x80 included, is kept.
std::string AppendSafeReference(std::string_view v, bool is_uri) {
  std::string out;
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || (is_uri && c == ' ')) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

TEST(AppendSafe, EscapesExactlyTheBytesOfTheRuleAtEveryPosition) {
  EXPECT_EQ(AppendSafeReference("a b\r\n\x7f\x80", true), "a%20b%0D%0A%7F\x80");
  // Every byte value at every position of strings up to 70 bytes (four 16-byte steps and a
  // tail), in a URI and in a plain value, appended after existing text.
  for (const bool is_uri : {true, false}) {
    for (size_t len = 0; len <= 70; ++len) {
      for (int byte = 0; byte < 256; ++byte) {
        for (size_t at = 0; at < std::max<size_t>(len, 1); at += (len > 20 ? 7 : 1)) {
          std::string v(len, 'x');
          if (len > 0) v[at] = static_cast<char>(byte);
          if (len > 3) v[len - 1] = static_cast<char>(byte ^ 0x20);
          std::string out = "prefix:";
          internal::AppendSafe(v, is_uri, &out);
          ASSERT_EQ(out, "prefix:" + AppendSafeReference(v, is_uri))
              << "len " << len << " byte " << byte << " at " << at << " uri " << is_uri;
        }
      }
    }
  }
  // Random strings rich in bytes to escape.
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int n = 0; n < 2000; ++n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    std::string v((state >> 33) % 200, '\0');
    for (char& ch : v) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const int r = static_cast<int>((state >> 33) % 8);
      ch = r == 0   ? ' '
           : r == 1 ? '\x7f'
           : r == 2 ? static_cast<char>((state >> 40) % 0x20)
                    : static_cast<char>((state >> 40) & 0xff);
    }
    std::string out;
    internal::AppendSafe(v, n % 2 == 0, &out);
    ASSERT_EQ(out, AppendSafeReference(v, n % 2 == 0)) << "string " << n;
  }
}

TEST(RewriteResponseHead, RenamesTransferEncoding) {
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\ntransfer-encoding: chunked\r\n"
      "X-Transfer-Encoding: kept\r\n\r\n";
  EXPECT_EQ(internal::RewriteResponseHead(head),
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
            "X-Harvest-Original-Transfer-Encoding: chunked\r\n"
            "X-Transfer-Encoding: kept\r\n\r\n");
}

TEST(RewriteResponseHead, NormalisesTerminator) {
  EXPECT_EQ(internal::RewriteResponseHead("HTTP/1.1 204 No Content\r\n"),
            "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(internal::RewriteResponseHead("HTTP/1.1 204 No Content"),
            "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(internal::RewriteResponseHead(""), "");
}

TEST(SurtKey, PywbStyle) {
  EXPECT_EQ(SurtKey("http://www.Example.com/Path?b=2&a=1#frag"), "com,example)/path?a=1&b=2");
  EXPECT_EQ(SurtKey("https://sub.example.co.uk"), "uk,co,example,sub)/");
  EXPECT_EQ(SurtKey("http://example.com:8080/x"), "com,example:8080)/x");
  EXPECT_EQ(SurtKey("https://example.com:443/x"), "com,example)/x");
  EXPECT_EQ(SurtKey("http://user:pw@example.com/"), "com,example)/");
  EXPECT_EQ(SurtKey("http://example.com?q"), "com,example)/?q");
  EXPECT_EQ(SurtKey("http://[::1]:8080/"), "[::1]:8080)/");
  EXPECT_EQ(SurtKey("http://127.0.0.1:8000/a"), "127.0.0.1:8000)/a");  // IP hosts not reversed
  EXPECT_EQ(SurtKey("Not a URL#x"), "not a url");
}

TEST(Cdxj, FormatAndParseRoundTrip) {
  internal::CdxjEntry e{"com,example)/",
                        "20261126032001",
                        "http://example.com/",
                        "text/html",
                        "200",
                        "sha256:ABC",
                        123,
                        456,
                        "h-1.warc.gz"};
  std::string line = internal::FormatCdxjLine(e);
  EXPECT_EQ(line,
            "com,example)/ 20261126032001 {\"url\":\"http://example.com/\",\"mime\":\"text/html\","
            "\"status\":\"200\",\"digest\":\"sha256:ABC\",\"length\":123,\"offset\":456,"
            "\"filename\":\"h-1.warc.gz\"}");
  Result<internal::CdxjEntry> back = internal::ParseCdxjLine(line);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->url, e.url);
  EXPECT_EQ(back->offset, 456u);
  EXPECT_EQ(back->length, 123u);
  EXPECT_EQ(back->status, "200");
  EXPECT_EQ(back->near_dup_of, "");
  e.near_dup_of = "http://example.com/twin";
  line = internal::FormatCdxjLine(e);
  EXPECT_NE(line.find(",\"filename\":\"h-1.warc.gz\",\"near_dup_of\":\"http://example.com/twin\"}"),
            std::string::npos)
      << line;
  back = internal::ParseCdxjLine(line);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->near_dup_of, "http://example.com/twin");
  EXPECT_FALSE(internal::ParseCdxjLine("garbage").ok());
  EXPECT_FALSE(internal::ParseCdxjLine("a b {not json").ok());
}

TEST(ParseHttpResponse, StatusHeadersBody) {
  Result<HttpResponse> r = ParseHttpResponse(
      "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nX-Fold: a\r\n b\r\n\r\nbody\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->reason, "Not Found");
  EXPECT_EQ(r->header("content-type"), "text/plain");
  EXPECT_EQ(r->header("X-Fold"), "a b");
  EXPECT_EQ(r->body, "body\r\n\r\n");
}

TEST(ParseHttpResponse, Http2AndBareLf) {
  Result<HttpResponse> r = ParseHttpResponse("HTTP/2 200\nserver: x\n\nhi");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->reason, "");
  EXPECT_EQ(r->header("Server"), "x");
  EXPECT_EQ(r->body, "hi");
}

TEST(ParseHttpResponse, RejectsMalformed) {
  EXPECT_FALSE(ParseHttpResponse("").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nno end").ok());
  EXPECT_FALSE(ParseHttpResponse("GET / HTTP/1.1\r\n\r\n").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 2x0 OK\r\n\r\n").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 2000 OK\r\n\r\n").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1\r\n\r\n").ok());
}

}  // namespace
}  // namespace harvest::store
