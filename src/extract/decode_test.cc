// DecodeContent tests (RFC 9110 §8.4 content codings).
#include <gtest/gtest.h>

#include <string>

#include "extract/extract.h"
#include "extract/test_util.h"

namespace harvest::extract {
namespace {

const std::string kBody = [] {
  std::string s;
  for (int i = 0; i < 2000; ++i) s += "<p>line " + std::to_string(i) + "</p>\n";
  return s;
}();

constexpr size_t kMax = 10 << 20;

TEST(DecodeContent, Identity) {
  DecodeResult r = DecodeContent("", "abc", kMax);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.body, "abc");
  EXPECT_EQ(DecodeContent("identity", "abc", kMax).body, "abc");
}

TEST(DecodeContent, Gzip) {
  DecodeResult r = DecodeContent("gzip", testing::Gzip(kBody), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
  EXPECT_EQ(DecodeContent("X-GZIP", testing::Gzip(kBody), kMax).body, kBody);
}

TEST(DecodeContent, GzipMultiMember) {
  DecodeResult r = DecodeContent("gzip", testing::Gzip("abc") + testing::Gzip("def"), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "abcdef");
}

TEST(DecodeContent, DeflateZlibAndRaw) {
  DecodeResult r = DecodeContent("deflate", testing::Deflate(kBody, 15), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
  r = DecodeContent("deflate", testing::Deflate(kBody, -15), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
}

TEST(DecodeContent, Brotli) {
  DecodeResult r = DecodeContent("br", testing::Brotli(kBody), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
}

TEST(DecodeContent, Zstd) {
  DecodeResult r = DecodeContent("zstd", testing::Zstd(kBody), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
}

TEST(DecodeContent, Rfc9110_ListDecodedInReverse) {
  // "gzip, br": gzip applied first, then br.
  DecodeResult r = DecodeContent("gzip, br", testing::Brotli(testing::Gzip(kBody)), kMax);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, kBody);
  r = DecodeContent("br,gzip", testing::Brotli(testing::Gzip(kBody)), kMax);
  EXPECT_FALSE(r.ok);
}

TEST(DecodeContent, GzipBombStopped) {
  std::string bomb = testing::Gzip(std::string(64u << 20, '\0'));
  DecodeResult r = DecodeContent("gzip", bomb, 1 << 20);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.too_large);
  EXPECT_EQ(r.body.size(), 1u << 20);
}

TEST(DecodeContent, BrotliAndZstdBombsStopped) {
  std::string zeros(32u << 20, '\0');
  DecodeResult r = DecodeContent("br", testing::Brotli(zeros), 1 << 20);
  EXPECT_TRUE(r.too_large);
  EXPECT_EQ(r.body.size(), 1u << 20);
  r = DecodeContent("zstd", testing::Zstd(zeros), 1 << 20);
  EXPECT_TRUE(r.too_large);
  EXPECT_EQ(r.body.size(), 1u << 20);
}

TEST(DecodeContent, IdentityOverCapIsTooLarge) {
  DecodeResult r = DecodeContent("identity", "abcdef", 3);
  EXPECT_TRUE(r.too_large);
  EXPECT_EQ(r.body, "abc");
}

TEST(DecodeContent, CorruptAndTruncated) {
  std::string gz = testing::Gzip(kBody);
  DecodeResult r = DecodeContent("gzip", gz.substr(0, gz.size() / 2), kMax);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.too_large);
  EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
  EXPECT_EQ(kBody.compare(0, r.body.size(), r.body), 0);  // a prefix of the real body
  EXPECT_FALSE(DecodeContent("gzip", "not gzip at all", kMax).ok);
  EXPECT_FALSE(DecodeContent("br", "\xff\xff\xff", kMax).ok);
  EXPECT_FALSE(DecodeContent("zstd", "nope", kMax).ok);
  std::string zs = testing::Zstd(kBody);
  EXPECT_FALSE(DecodeContent("zstd", zs.substr(0, zs.size() - 4), kMax).ok);
}

TEST(DecodeContent, UnknownCoding) {
  DecodeResult r = DecodeContent("compress", "xyz", kMax);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.unsupported);
  EXPECT_EQ(r.body, "xyz");
  EXPECT_NE(r.error.find("compress"), std::string::npos);
}

}  // namespace
}  // namespace harvest::extract
