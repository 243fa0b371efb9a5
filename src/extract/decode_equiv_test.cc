// DecodeContent's libdeflate path against the zlib-only path: every result (ok, too_large,
// error, body) must be the same on valid, truncated, corrupt, multi-member and oversized input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "extract/decode.h"
#include "extract/test_util.h"

namespace harvest::extract {
namespace {

using internal::DecodeContentWith;
using internal::Inflater;

void ExpectSameResult(std::string_view coding, std::string_view raw, size_t max,
                      const std::string& what) {
  const DecodeResult fast = DecodeContentWith(coding, raw, max, Inflater::kFast);
  const DecodeResult zlib = DecodeContentWith(coding, raw, max, Inflater::kZlib);
  EXPECT_EQ(fast.ok, zlib.ok) << what;
  EXPECT_EQ(fast.too_large, zlib.too_large) << what;
  EXPECT_EQ(fast.unsupported, zlib.unsupported) << what;
  EXPECT_EQ(fast.error, zlib.error) << what;
  EXPECT_TRUE(fast.body == zlib.body)
      << what << ": bodies differ (sizes " << fast.body.size() << ", " << zlib.body.size() << ")";
}

std::string Le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// A gzip member with a header CRC (FLG.FHCRC), right or wrong.
std::string GzipWithHeaderCrc(std::string_view data, bool right_crc) {
  std::string out("\x1f\x8b\x08\x02\0\0\0\0\0\x03", 10);
  const uint32_t header_crc = crc32(0, reinterpret_cast<const Bytef*>(out.data()), 10);
  const uint16_t crc16 = static_cast<uint16_t>(header_crc ^ (right_crc ? 0 : 1));
  out.push_back(static_cast<char>(crc16 & 0xff));
  out.push_back(static_cast<char>(crc16 >> 8));
  out += testing::Deflate(data, -15);
  out += Le32(crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
  out += Le32(static_cast<uint32_t>(data.size()));
  return out;
}

std::vector<std::string> Bodies() {
  std::mt19937 rng(5);
  std::string html;
  for (int i = 0; i < 3000; ++i) html += "<p>line " + std::to_string(i) + " of the page</p>\n";
  std::string noise(70000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  return {"", "a", "hello, world", html, noise, std::string(300000, 'z')};
}

TEST(DecodeEquivalence, ValidAndCapped) {
  for (const std::string& body : Bodies()) {
    const std::vector<std::pair<std::string, std::string>> encoded = {
        {"gzip", testing::Gzip(body)},
        {"deflate", testing::Deflate(body, 15)},
        {"deflate", testing::Deflate(body, -15)},
        {"gzip, gzip", testing::Gzip(testing::Gzip(body))},
        {"gzip", testing::Gzip(body) + testing::Gzip("second") + testing::Gzip(body)},
        {"gzip", testing::Gzip(body) + testing::Gzip("")},
        {"gzip", testing::Gzip(body) + std::string(8, '\0')},
        {"gzip", testing::Gzip(body) + "garbage after the member"},
        {"deflate", testing::Deflate(body, 15) + "trailing"},
        {"gzip", GzipWithHeaderCrc(body, true)},
        {"gzip", GzipWithHeaderCrc(body, false)},
    };
    for (const auto& [coding, raw] : encoded) {
      for (size_t max : {size_t{0}, size_t{1}, body.size() / 2, body.size(), body.size() + 1,
                         body.size() + 6, body.size() * 2 + 6, size_t{10} << 20}) {
        ExpectSameResult(coding, raw, max,
                         coding + " body " + std::to_string(body.size()) + " max " +
                             std::to_string(max) + " raw " + std::to_string(raw.size()));
      }
    }
  }
}

TEST(DecodeEquivalence, TruncatedAndCorrupt) {
  std::mt19937 rng(9);
  for (const std::string& body : Bodies()) {
    for (const auto& [coding, raw] : std::vector<std::pair<std::string, std::string>>{
             {"gzip", testing::Gzip(body)},
             {"deflate", testing::Deflate(body, 15)},
             {"gzip", testing::Gzip("first member") + testing::Gzip(body)}}) {
      // Every cut of a small stream, a sample of cuts of a large one.
      const size_t step = raw.size() < 200 ? 1 : raw.size() / 97;
      for (size_t cut = 0; cut < raw.size(); cut += step) {
        ExpectSameResult(coding, raw.substr(0, cut), 10 << 20,
                         coding + " cut at " + std::to_string(cut));
      }
      for (int t = 0; t < 200 && !raw.empty(); ++t) {
        std::string bad = raw;
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; ++f)
          bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
        const size_t max = t % 4 == 0 ? body.size() / 2 : size_t{10} << 20;
        ExpectSameResult(coding, bad, max, coding + " corrupt trial " + std::to_string(t));
        if (HasFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace harvest::extract
