// Fingerprints: MurmurHash3_x64_128 reference vectors, stability and distinctness.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "url/url.h"

namespace harvest::url {
namespace {

// Reference values published with MurmurHash3 ports (e.g. mmh3, Guava, DataSketches).
TEST(Fingerprint, MurmurHash3ReferenceVectors) {
  EXPECT_EQ(MurmurHash3x64_128("", 0), (Fingerprint128Value{0, 0}));
  Fingerprint128Value fox = MurmurHash3x64_128("The quick brown fox jumps over the lazy dog", 0);
  EXPECT_EQ(fox.hi, 0xe34bbc7bbc071b6cULL);
  EXPECT_EQ(fox.lo, 0x7a433ca9c49a9347ULL);
  EXPECT_EQ(MurmurHash3x64_128("hello", 0).hi, 0xcbd8a7b341bd9b02ULL);
  Fingerprint128Value seeded = MurmurHash3x64_128("hello", 42);
  EXPECT_EQ(seeded.hi, 0xc4b8b3c960af6f08ULL);
  EXPECT_EQ(seeded.lo, 0x2334b875b0efbc7aULL);
}

TEST(Fingerprint, StableAndConsistent) {
  std::string href = "http://example.com/a?b=1";
  EXPECT_EQ(Fingerprint64(href), Fingerprint64(std::string(href)));
  EXPECT_EQ(Fingerprint64(href), Fingerprint128(href).hi);
}

TEST(Fingerprint, DistinctForDistinctUrls) {
  std::set<uint64_t> f64;
  std::set<std::pair<uint64_t, uint64_t>> f128;
  int n = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string href = "http://h" + std::to_string(i % 97) + ".example/p/" + std::to_string(i);
    f64.insert(Fingerprint64(href));
    Fingerprint128Value v = Fingerprint128(href);
    f128.insert({v.hi, v.lo});
    ++n;
  }
  EXPECT_EQ(f64.size(), static_cast<size_t>(n));
  EXPECT_EQ(f128.size(), static_cast<size_t>(n));
  // Every tail length (0..15 bytes past a block) changes the hash.
  std::set<uint64_t> prefixes;
  std::string s = "http://example.com/abcdefghijklmnopqrstuvwxyz0123456789";
  for (size_t len = 0; len <= s.size(); ++len) prefixes.insert(Fingerprint64(s.substr(0, len)));
  EXPECT_EQ(prefixes.size(), s.size() + 1);
}

}  // namespace
}  // namespace harvest::url
