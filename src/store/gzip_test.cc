// GzipCompressor: members any gzip reader (zlib here) inflates back, with reused buffers.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

#include "store/internal.h"

namespace harvest::store::internal {
namespace {

// Inflates exactly one gzip member that fills all of `member`; "<error>" otherwise.
std::string InflateOneMember(std::string_view member) {
  z_stream z{};
  if (inflateInit2(&z, 31) != Z_OK) return "<error>";
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(member.data()));
  z.avail_in = static_cast<uInt>(member.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return whole ? out : "<error>";
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(GzipCompressor, AppendMemberAppendsAndReusesItsBuffer) {
  GzipCompressor gzip(1);
  std::string out = "prefix";
  const std::string big(100000, 'a');
  ASSERT_TRUE(gzip.AppendMember(big, &out).ok());
  const size_t first = out.size();
  ASSERT_TRUE(gzip.AppendMember("small", &out).ok());
  EXPECT_EQ(out.substr(0, 6), "prefix");
  EXPECT_EQ(InflateOneMember(std::string_view(out).substr(6, first - 6)), big);
  EXPECT_EQ(InflateOneMember(std::string_view(out).substr(first)), "small");
  Result<std::string> m = gzip.Member("");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(InflateOneMember(*m), "");
}

// Level 1 (igzip) and a libdeflate level: text, incompressible bytes (igzip's stored
// fallback must fit the buffer) and sizes around a deflate block and the buffer's growth.
TEST(GzipCompressor, MembersInflateBackAtLevelOneAndAbove) {
  std::string text;
  for (int i = 0; text.size() < 300000; ++i) text += "word" + std::to_string(i % 977) + " ";
  for (int level : {1, 2, 6}) {
    GzipCompressor gzip(level);
    for (size_t n :
         {size_t{0}, size_t{1}, size_t{100}, size_t{65535}, size_t{65537}, size_t{300000}}) {
      for (const std::string& data :
           {text.substr(0, n), RandomBytes(n, static_cast<uint32_t>(n))}) {
        std::string out;
        ASSERT_TRUE(gzip.AppendMember(data, &out).ok()) << level << " " << n;
        EXPECT_EQ(InflateOneMember(out), data) << "level " << level << ", " << n << " bytes";
      }
    }
    // Text compresses at every level.
    Result<std::string> m = gzip.Member(text);
    ASSERT_TRUE(m.ok());
    EXPECT_LT(m->size(), text.size() / 2) << level;
  }
}

TEST(GzipCompressor, StoredMemberInflatesToTheThreePartsAtEveryLevel) {
  const std::string head =
      "WARC/1.1\r\nWARC-Type: response\r\nContent-Type: application/http\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/html\r\n\r\n";
  for (int level : {1, 6, 9, 12}) {
    GzipCompressor gzip(level);
    // Several sizes, the largest beyond a stored block (64 KiB) and the initial buffer;
    // also empty parts, and the compressor reused across records.
    for (size_t n : {size_t{0}, size_t{1}, size_t{4000}, size_t{70000}, size_t{300000}}) {
      const std::string payload = RandomBytes(n, static_cast<uint32_t>(n + level));
      std::string out = "x";
      ASSERT_TRUE(gzip.AppendMemberStored(head, payload, "\r\n\r\n", &out).ok());
      EXPECT_EQ(out[0], 'x');
      EXPECT_EQ(InflateOneMember(std::string_view(out).substr(1)), head + payload + "\r\n\r\n")
          << "level " << level << " size " << n;
      // Stored: about the payload's size plus the compressed head, never much more.
      EXPECT_LT(out.size(), n + n / 1000 + head.size() + 40);
      ASSERT_TRUE(gzip.AppendMemberStored("", payload, "", &out).ok());
      ASSERT_TRUE(gzip.AppendMember(head, &out).ok());  // libdeflate in between
    }
  }
  // A head too large for the first output buffer estimate still fits (the buffer grows).
  GzipCompressor gzip(1);
  const std::string noisy_head = RandomBytes(200000, 7);
  std::string out;
  ASSERT_TRUE(gzip.AppendMemberStored(noisy_head, "p", "t", &out).ok());
  EXPECT_EQ(InflateOneMember(out), noisy_head + "pt");
}

}  // namespace
}  // namespace harvest::store::internal
