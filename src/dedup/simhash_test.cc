#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>

#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

std::string RandomText(std::mt19937* rng, int words) {
  static const char* kVocab[] = {"crawler", "harvest", "page",  "link",  "host",    "robots",
                                 "delay",   "queue",   "fetch", "store", "archive", "record",
                                 "the",     "a",       "of",    "and",   "to",      "in",
                                 "network", "server",  "data",  "text",  "web",     "index"};
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kVocab[(*rng)() % (sizeof(kVocab) / sizeof(kVocab[0]))];
    out += std::to_string((*rng)() % 50);
    out += ' ';
  }
  return out;
}

TEST(SimHash, EmptyAndDeterministic) {
  EXPECT_EQ(SimHash64(""), 0u);
  EXPECT_EQ(SimHash64("  ,.; "), 0u);
  EXPECT_EQ(SimHash64("hello world again"), SimHash64("hello world again"));
  EXPECT_NE(SimHash64("one"), 0u);
  // Case and punctuation do not matter; word order does.
  EXPECT_EQ(SimHash64("Hello, World! Again."), SimHash64("hello world again"));
  EXPECT_NE(SimHash64("hello world again"), SimHash64("again world hello"));
}

// A long page with one word changed (or a footer date) stays within distance 3; two
// unrelated pages are far apart (expected 32).
TEST(SimHash, NearDuplicatesCloseDifferentPagesFar) {
  std::mt19937 rng(3);
  int near_ok = 0;
  int far_ok = 0;
  constexpr int kTrials = 50;
  for (int t = 0; t < kTrials; ++t) {
    const std::string page = RandomText(&rng, 800);
    const std::string edited = page + " updated 2026 11 26";
    near_ok += HammingDistance(SimHash64(page), SimHash64(edited)) <= 3;
    far_ok += HammingDistance(SimHash64(page), SimHash64(RandomText(&rng, 800))) > 10;
  }
  EXPECT_GE(near_ok, kTrials * 9 / 10);
  EXPECT_EQ(far_ok, kTrials);
}

TEST(SimHashIndex, FindsExactAndNear) {
  SimHashIndex index;
  EXPECT_FALSE(index.FindNear(123).has_value());
  index.Insert(0xffff'0000'ffff'0000ULL, 1);
  index.Insert(0x1234'5678'9abc'def0ULL, 2);
  EXPECT_EQ(index.FindNear(0xffff'0000'ffff'0000ULL), 1u);
  // 3 bits flipped in 3 different blocks.
  EXPECT_EQ(index.FindNear(0xffff'0000'ffff'0000ULL ^ 0x0001'0001'0001'0000ULL), 1u);
  // 4 bits flipped: out of range.
  EXPECT_FALSE(index.FindNear(0xffff'0000'ffff'0000ULL ^ 0x0001'0001'0001'0001ULL).has_value());
  // A smaller max_distance is honoured.
  EXPECT_FALSE(index.FindNear(0x1234'5678'9abc'def0ULL ^ 0x3, 1).has_value());
  EXPECT_EQ(index.FindNear(0x1234'5678'9abc'def0ULL ^ 0x3, 2), 2u);
}

TEST(SimHashIndex, PrefersClosest) {
  SimHashIndex index;
  index.Insert(0b111, 1);  // distance 3 from 0
  index.Insert(0b1, 2);    // distance 1 from 0
  EXPECT_EQ(index.FindNear(0), 2u);
}

// Brute-force cross-check: random hashes plus planted neighbours at distance 0..4.
TEST(SimHashIndex, MatchesBruteForce) {
  std::mt19937_64 rng(11);
  SimHashIndex index;
  std::vector<uint64_t> hashes;
  for (uint64_t id = 0; id < 20'000; ++id) {
    uint64_t h = rng();
    if (id % 2 == 1) {  // near the previous one
      h = hashes.back();
      const int flips = static_cast<int>(rng() % 5);
      for (int f = 0; f < flips; ++f) h ^= uint64_t{1} << (rng() % 64);
    }
    hashes.push_back(h);
    index.Insert(h, id);
  }
  for (int q = 0; q < 2000; ++q) {
    uint64_t query = hashes[rng() % hashes.size()];
    const int flips = static_cast<int>(rng() % 5);
    for (int f = 0; f < flips; ++f) query ^= uint64_t{1} << (rng() % 64);
    for (int d = 0; d <= 3; ++d) {
      // The closest entry within d; among equals the first inserted.
      std::optional<uint64_t> expected;
      int best = d + 1;
      for (uint64_t id = 0; id < hashes.size(); ++id) {
        const int dist = HammingDistance(query, hashes[id]);
        if (dist < best) {
          expected = id;
          best = dist;
        }
      }
      ASSERT_EQ(index.FindNear(query, d), expected) << "query " << q << " d " << d;
    }
  }
}

}  // namespace
}  // namespace harvest::dedup
