#include "dedup/count_min.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>

namespace harvest::dedup {
namespace {

TEST(CountMinSketch, ExactForFewKeys) {
  CountMinSketch s(64 << 10);
  EXPECT_EQ(s.Estimate(42), 0u);
  for (int i = 0; i < 7; ++i) s.Add(42);
  s.Add(43, 3);
  EXPECT_EQ(s.Estimate(42), 7u);
  EXPECT_EQ(s.Estimate(43), 3u);
  EXPECT_EQ(s.Estimate(44), 0u);
  EXPECT_EQ(s.total(), 10u);
}

TEST(CountMinSketch, SizedFromBytes) {
  CountMinSketch s(1 << 20, 4);
  EXPECT_EQ(s.depth(), 4);
  EXPECT_EQ(s.width(), (1u << 20) / 2 / 4);
  EXPECT_EQ(s.memory_bytes(), size_t{1} << 20);
  CountMinSketch tiny(0, 99);
  EXPECT_EQ(tiny.depth(), 16);
  EXPECT_EQ(tiny.width(), 64u);
}

TEST(CountMinSketch, SaturatesInsteadOfWrapping) {
  CountMinSketch s(4096);
  s.Add(1, 60000);
  s.Add(1, 60000);
  EXPECT_EQ(s.Estimate(1), CountMinSketch::kMaxCount);
  s.Add(1);
  EXPECT_EQ(s.Estimate(1), CountMinSketch::kMaxCount);
}

// Never below the truth; above it by little on average under load (Zipf-like counts, more
// keys than counters per row).
TEST(CountMinSketch, NeverUnderestimatesAndErrsLittle) {
  CountMinSketch s(64 << 10, 4);  // 8192 counters per row
  std::mt19937_64 rng(7);
  std::unordered_map<uint64_t, uint32_t> truth;
  for (int i = 0; i < 200000; ++i) {
    // Key k with weight ~ 1/k over 20000 keys.
    const uint64_t k = static_cast<uint64_t>(20000.0 / (1.0 + static_cast<double>(rng() % 20000)));
    s.Add(k * 0x1000193);  // a weak caller hash: the sketch remixes
    ++truth[k * 0x1000193];
  }
  double excess = 0;
  for (const auto& [k, n] : truth) {
    const uint32_t e = s.Estimate(k);
    ASSERT_GE(e, std::min(n, CountMinSketch::kMaxCount));
    if (e > n) excess += e - n;
  }
  EXPECT_LT(excess / static_cast<double>(truth.size()), 2.0);
}

}  // namespace
}  // namespace harvest::dedup
