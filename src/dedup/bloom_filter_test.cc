#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

TEST(BloomFilter, NoFalseNegatives) {
  BloomFilter f(10'000, 0.01);
  for (uint64_t i = 0; i < 10'000; ++i) f.Insert(i * 7919);
  for (uint64_t i = 0; i < 10'000; ++i) EXPECT_TRUE(f.MayContain(i * 7919)) << i;
}

// The measured false-positive rate on 1 M keys stays within 1.5x of the target, with
// sequential keys (a weak caller hash) as well as random ones.
TEST(BloomFilter, MeasuredFalsePositiveRate) {
  for (double target : {0.01, 0.001}) {
    constexpr uint64_t kItems = 1'000'000;
    BloomFilter f(kItems, target);
    for (uint64_t i = 0; i < kItems; ++i) f.Insert(i);  // sequential keys: must be remixed
    std::mt19937_64 rng(42);
    constexpr int kProbes = 2'000'000;
    int positives = 0;
    for (int i = 0; i < kProbes; ++i) {
      const uint64_t key = rng() | (uint64_t{1} << 63);  // never one of 0..kItems
      positives += f.MayContain(key);
    }
    const double fpr = static_cast<double>(positives) / kProbes;
    std::printf("target %.4f measured %.5f (%.2f bits/key, k=%d)\n", target, fpr,
                f.memory_bytes() * 8.0 / kItems, f.num_probes());
    EXPECT_LT(fpr, target * 1.5) << "target " << target;
    EXPECT_GT(fpr, target / 3) << "sized far too large for " << target;
  }
}

TEST(BloomFilter, InsertReportsNewKeys) {
  BloomFilter f(1000, 0.01);
  EXPECT_TRUE(f.Insert(12345));
  EXPECT_FALSE(f.Insert(12345));
  EXPECT_EQ(f.inserted(), 1u);
}

TEST(BloomFilter, SizedForTarget) {
  BloomFilter f(1'000'000, 0.01);
  // The classic filter needs 9.6 bits per key; blocking costs a little more.
  const double bits_per_key = f.memory_bytes() * 8.0 / 1'000'000;
  EXPECT_GT(bits_per_key, 9.5);
  EXPECT_LT(bits_per_key, 13.0);
  EXPECT_EQ(f.memory_bytes() % 64, 0u);
}

}  // namespace
}  // namespace harvest::dedup
