#include <gtest/gtest.h>

#include <vector>

#include <random>
#include <set>
#include <unordered_set>

#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

TEST(FingerprintSet, InsertContainsGrow) {
  FingerprintSet s;
  const size_t initial = s.capacity();
  for (uint64_t i = 0; i < 100'000; ++i) EXPECT_TRUE(s.Insert(i * 0x9e3779b97f4a7c15ULL));
  EXPECT_GT(s.capacity(), initial);
  EXPECT_EQ(s.size(), 100'000u);
  EXPECT_LE(s.size(), s.capacity() / 4 * 3);
  for (uint64_t i = 0; i < 100'000; ++i) {
    EXPECT_TRUE(s.Contains(i * 0x9e3779b97f4a7c15ULL));
    EXPECT_FALSE(s.Insert(i * 0x9e3779b97f4a7c15ULL));
  }
  EXPECT_FALSE(s.Contains(12345));
}

TEST(FingerprintSet, SortedKeysAndClear) {
  FingerprintSet s(4);
  for (uint64_t k : {9u, 0u, 5u, 1000u, 5u, 77u}) s.Insert(k);
  EXPECT_EQ(s.SortedKeys(), (std::vector<uint64_t>{0, 5, 9, 77, 1000}));
  const size_t capacity = s.capacity();
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.capacity(), capacity);
  EXPECT_TRUE(s.SortedKeys().empty());
  EXPECT_FALSE(s.Contains(0));
  EXPECT_FALSE(s.Contains(77));
  EXPECT_TRUE(s.Insert(77));
  EXPECT_EQ(s.SortedKeys(), (std::vector<uint64_t>{77}));
}

TEST(FingerprintSet, ZeroKey) {
  FingerprintSet s;
  EXPECT_FALSE(s.Contains(0));
  EXPECT_TRUE(s.Insert(0));
  EXPECT_FALSE(s.Insert(0));
  EXPECT_TRUE(s.Contains(0));
  EXPECT_EQ(s.size(), 1u);
}

TEST(SeenSet, BasicInsertIfNew) {
  SeenSet s(SeenSetOptions{.expected_urls = 1000});
  EXPECT_TRUE(s.InsertIfNew(42));
  EXPECT_FALSE(s.InsertIfNew(42));
  EXPECT_TRUE(s.Contains(42));
  EXPECT_FALSE(s.Contains(43));
  EXPECT_EQ(s.size(), 1u);
}

// A deliberately overloaded Bloom filter (sized for 1000, fed 200 000) produces many false
// positives; the exact set must catch every one (no URL lost) and never forget a URL.
TEST(SeenSet, FalsePositivesNeverLoseUrls) {
  SeenSet s(SeenSetOptions{.expected_urls = 1000, .false_positive_rate = 0.01});
  std::unordered_set<uint64_t> truth;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t fp = rng() % 400'000;  // many repeats
    const bool expected_new = truth.insert(fp).second;
    ASSERT_EQ(s.InsertIfNew(fp), expected_new) << fp;
  }
  EXPECT_EQ(s.size(), truth.size());
  EXPECT_GT(s.false_positives(), 0u) << "test should exercise Bloom false positives";
  EXPECT_EQ(s.bloom_hits(), s.exact_checks());
  // Repeats were all Bloom hits that were not false positives.
  EXPECT_EQ(s.bloom_hits() - s.false_positives(), 200'000u - truth.size());
  for (uint64_t fp = 0; fp < 400'000; ++fp) ASSERT_EQ(s.Contains(fp), truth.count(fp) == 1);
}

TEST(SeenSet, WellSizedFilterRarelyChecks) {
  SeenSet s(SeenSetOptions{.expected_urls = 100'000});
  for (uint64_t i = 1; i <= 100'000; ++i) ASSERT_TRUE(s.InsertIfNew(i));
  // New keys reach the exact set only on a Bloom false positive (~1% at the end, less before).
  EXPECT_LT(s.exact_checks(), 1'000u);
  EXPECT_EQ(s.false_positives(), s.exact_checks());
}

}  // namespace
}  // namespace harvest::dedup

namespace {
class MapBackend final : public harvest::dedup::SeenBackend {
 public:
  bool Contains(uint64_t fp) const override { return set.count(fp) > 0; }
  void Insert(uint64_t fp) override { set.insert(fp); }
  std::set<uint64_t> set;
};

// Counts the backend's exact lookups.
class CountingBackend final : public harvest::dedup::SeenBackend {
 public:
  bool Contains(uint64_t fp) const override {
    ++lookups;
    return set.count(fp) > 0;
  }
  void Insert(uint64_t fp) override { set.insert(fp); }
  std::set<uint64_t> set;
  mutable uint64_t lookups = 0;
};
}  // namespace

TEST(SeenSetBackend, ExactAnswersComeFromTheBackend) {
  MapBackend backend;
  harvest::dedup::SeenSet seen({.expected_urls = 1000, .false_positive_rate = 0.01}, &backend);
  for (uint64_t fp = 1; fp <= 500; ++fp) EXPECT_TRUE(seen.InsertIfNew(fp * 7919));
  EXPECT_EQ(backend.set.size(), 500u);
  for (uint64_t fp = 1; fp <= 500; ++fp) EXPECT_FALSE(seen.InsertIfNew(fp * 7919));
  EXPECT_EQ(seen.size(), 500u);
}

TEST(SeenSetBackend, PreloadRestoresTheBloomFilterOfARestart) {
  MapBackend backend;
  for (uint64_t fp = 1; fp <= 300; ++fp) backend.set.insert(fp);
  harvest::dedup::SeenSet seen({.expected_urls = 1000, .false_positive_rate = 0.01}, &backend);
  for (uint64_t fp = 1; fp <= 300; ++fp) seen.Preload(fp);
  for (uint64_t fp = 1; fp <= 300; ++fp) {
    EXPECT_TRUE(seen.Contains(fp));
    EXPECT_FALSE(seen.InsertIfNew(fp));
  }
  EXPECT_TRUE(seen.InsertIfNew(301));
  EXPECT_EQ(backend.set.size(), 301u);
  // Without Preload the Bloom filter answers "certainly new" and the backend is not asked:
  harvest::dedup::SeenSet cold({.expected_urls = 1000, .false_positive_rate = 0.01}, &backend);
  EXPECT_FALSE(cold.Contains(5));
}

namespace harvest::dedup {
namespace {

TEST(SeenSetBackend, RecentAnswersSkipTheBackend) {
  CountingBackend backend;
  SeenSet seen({.expected_urls = 100'000, .false_positive_rate = 0.01, .recent_cache = 1024},
               &backend);
  const SeenSet uncached({.expected_urls = 100'000, .recent_cache = 0}, &backend);
  EXPECT_EQ(seen.memory_bytes(), uncached.memory_bytes() + 1024 * sizeof(uint64_t));
  for (uint64_t fp = 1; fp <= 100; ++fp) EXPECT_TRUE(seen.InsertIfNew(fp * 0x9e3779b97f4a7c15ULL));
  // Linked again soon: known seen from the cache, without a backend read.
  const uint64_t before = backend.lookups;
  for (uint64_t fp = 1; fp <= 100; ++fp) {
    EXPECT_FALSE(seen.InsertIfNew(fp * 0x9e3779b97f4a7c15ULL));
    EXPECT_TRUE(seen.Contains(fp * 0x9e3779b97f4a7c15ULL));
  }
  EXPECT_LE(backend.lookups - before, 10u);  // only fingerprints that share a slot
  EXPECT_GE(seen.cache_hits(), 90u);
  // The cache only shortens "seen" answers: every fresh fingerprint is still new, and an
  // evicted entry is answered by the backend.
  for (uint64_t fp = 101; fp <= 20'000; ++fp) {
    EXPECT_TRUE(seen.InsertIfNew(fp * 0x9e3779b97f4a7c15ULL));
  }
  for (uint64_t fp = 1; fp <= 20'000; ++fp) {
    EXPECT_FALSE(seen.InsertIfNew(fp * 0x9e3779b97f4a7c15ULL)) << fp;
  }
  EXPECT_EQ(backend.set.size(), 20'000u);
  EXPECT_TRUE(seen.InsertIfNew(0x1234567));
  // Contains() remembers what the backend confirmed: asked twice, the backend reads once.
  SeenSet fresh({.expected_urls = 100'000, .false_positive_rate = 0.01, .recent_cache = 1024},
                &backend);
  fresh.Preload(0x42);
  backend.set.insert(0x42);
  const uint64_t reads = backend.lookups;
  EXPECT_TRUE(fresh.Contains(0x42));
  EXPECT_TRUE(fresh.Contains(0x42));
  EXPECT_EQ(backend.lookups - reads, 1u);
}

TEST(SeenSetBackend, NoCacheWhenSizedZero) {
  CountingBackend backend;
  SeenSet seen({.expected_urls = 1000, .false_positive_rate = 0.01, .recent_cache = 0}, &backend);
  for (uint64_t fp = 1; fp <= 50; ++fp) EXPECT_TRUE(seen.InsertIfNew(fp));
  for (uint64_t fp = 1; fp <= 50; ++fp) EXPECT_FALSE(seen.InsertIfNew(fp));
  EXPECT_EQ(backend.lookups, 50u);
  EXPECT_EQ(seen.cache_hits(), 0u);
}

// Prefetch only warms memory: every answer (and the backend's lookup count) is the same with
// or without it, in memory, with a backend and its cache, and with no cache — and it reads
// nothing out of bounds (the sanitizer build runs this too).
TEST(SeenSet, PrefetchChangesNoAnswer) {
  CountingBackend backend, backend_no_cache;
  SeenSet in_memory({.expected_urls = 100, .false_positive_rate = 0.01});
  SeenSet cached({.expected_urls = 100, .false_positive_rate = 0.01}, &backend);
  SeenSet uncached({.expected_urls = 100, .false_positive_rate = 0.01, .recent_cache = 0},
                   &backend_no_cache);
  for (SeenSet* s : {&in_memory, &cached, &uncached}) {
    for (uint64_t fp = 0; fp < 300; ++fp) s->Prefetch(fp * 0x9e3779b97f4a7c15ULL);
    for (uint64_t fp = 0; fp < 300; fp += 2)
      EXPECT_TRUE(s->InsertIfNew(fp * 0x9e3779b97f4a7c15ULL));
    for (uint64_t fp = 0; fp < 300; ++fp) {
      s->Prefetch(fp * 0x9e3779b97f4a7c15ULL);
      EXPECT_EQ(s->Contains(fp * 0x9e3779b97f4a7c15ULL), fp % 2 == 0) << fp;
    }
  }
  FingerprintSet exact(4);
  exact.Prefetch(0);
  exact.Prefetch(~uint64_t{0});
  EXPECT_FALSE(exact.Contains(~uint64_t{0}));
}

}  // namespace
}  // namespace harvest::dedup
