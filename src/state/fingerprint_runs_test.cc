// FingerprintRuns (fingerprint_runs.h): membership against a std::set oracle as runs are
// added and merged, in the foreground and on the merge thread while readers look keys up;
// durable across reopening; damaged files refused with their name; files of unrecorded runs
// removed.
#include "state/fingerprint_runs.h"
#include "base/testing/temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace harvest::state {
namespace {

using test_util::TempDir;

FingerprintRuns::Options Opts(const std::filesystem::path& dir, bool background) {
  FingerprintRuns::Options o;
  o.dir = dir;
  o.sync = false;
  o.background = background;
  return o;
}

// A sorted batch of n random keys (repeats removed), also added to *oracle.
std::vector<uint64_t> Batch(std::mt19937_64* rng, size_t n, std::set<uint64_t>* oracle) {
  std::vector<uint64_t> keys(n);
  for (uint64_t& k : keys) k = (*rng)();
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  oracle->insert(keys.begin(), keys.end());
  return keys;
}

void ExpectMatches(const FingerprintRuns& set, const std::set<uint64_t>& oracle,
                   std::mt19937_64* rng) {
  for (uint64_t k : oracle) {
    Result<bool> r = set.Contains(k);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(*r) << k;
  }
  for (int i = 0; i < 20000; ++i) {
    const uint64_t k = (*rng)();
    Result<bool> r = set.Contains(k);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, oracle.contains(k)) << k;
  }
  std::vector<uint64_t> all;
  ASSERT_TRUE(set.ForEach([&](uint64_t k) { all.push_back(k); }).ok());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), oracle.begin(), oracle.end()));
}

TEST(FingerprintRuns, EmptySetHoldsNothing) {
  TempDir dir("fingerprint_runs_test");
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_FALSE(*(*set)->Contains(42));
  EXPECT_TRUE((*set)->Add({}).ok());
  EXPECT_EQ((*set)->stats().runs, 0u);
}

TEST(FingerprintRuns, AddsAndMergesInTheForeground) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(7);
  std::set<uint64_t> oracle;
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok());
  size_t max_runs = 0;
  for (int i = 0; i < 60; ++i) {
    // Batches of different sizes, some spanning several pages, some less than one.
    ASSERT_TRUE((*set)->Add(Batch(&rng, 100 + (i * 397) % 3000, &oracle)).ok());
    max_runs = std::max(max_runs, (*set)->stats().runs);
  }
  const FingerprintRuns::Stats st = (*set)->stats();
  EXPECT_GT(st.merges, 0u);
  EXPECT_EQ(st.keys, oracle.size());  // merged down: no key in two runs
  // Each run holds more than merge_ratio (4) times the keys of all newer runs together.
  EXPECT_LE(max_runs, 8u);
  ExpectMatches(**set, oracle, &rng);
}

// Keys far from evenly spread (the page search starts where an even spread would put a key
// and widens from there, to the right or to the left): a dense block of small keys, a dense
// block just below 2^64 - 2^20 and a few keys above it, with the whole middle of the range
// empty; each key and its neighbours probed against a set.
TEST(FingerprintRuns, FindsKeysBunchedAnywhere) {
  TempDir dir("fingerprint_runs_bunched");
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::set<uint64_t> oracle;
  std::vector<uint64_t> dense, high, sparse;
  for (uint64_t k = 1000; k < 1000 + 20000 * 3; k += 3) dense.push_back(k);
  for (uint64_t k = 0; k < 20000; ++k) high.push_back((~uint64_t{0} - (1u << 20)) - 3 * k);
  for (uint64_t k = 0; k < 64; ++k) sparse.push_back(~uint64_t{0} - k * 1000);
  std::sort(high.begin(), high.end());
  std::sort(sparse.begin(), sparse.end());
  for (const std::vector<uint64_t>* keys : {&dense, &high, &sparse}) {
    ASSERT_TRUE((*set)->Add(*keys).ok());
    oracle.insert(keys->begin(), keys->end());
  }
  for (uint64_t k : oracle) {
    for (uint64_t probe : {k, k + 1, k - 1}) {
      Result<bool> r = (*set)->Contains(probe);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(*r, oracle.contains(probe)) << probe;
    }
  }
  for (uint64_t probe :
       {uint64_t{0}, uint64_t{999}, uint64_t{1} << 40, uint64_t{1} << 63, ~uint64_t{0}}) {
    EXPECT_EQ(*(*set)->Contains(probe), oracle.contains(probe)) << probe;
  }
}

// Keys spread unevenly within each 512-key page (a lookup first reads the 64 keys where an
// even spread between the page's first key and the next page's would put it): each page of
// this run has 480 consecutive keys at its start and 32 spread over the rest of its range,
// so most keys lie beyond their estimated window and are found only by reading the page.
TEST(FingerprintRuns, FindsKeysBunchedWithinAPage) {
  TempDir dir("fingerprint_runs_in_page");
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<uint64_t> keys;
  for (uint64_t page = 0; page < 8; ++page) {
    const uint64_t base = (page + 1) << 50;
    for (uint64_t i = 0; i < 480; ++i) keys.push_back(base + 2 * i);
    for (uint64_t i = 1; i <= 32; ++i) keys.push_back(base + i * (uint64_t{1} << 44));
  }
  std::sort(keys.begin(), keys.end());
  ASSERT_TRUE((*set)->Add(keys).ok());
  const std::set<uint64_t> oracle(keys.begin(), keys.end());
  for (uint64_t k : keys) {
    for (uint64_t probe : {k, k + 1, k - 1}) {
      Result<bool> r = (*set)->Contains(probe);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(*r, oracle.contains(probe)) << probe;
    }
  }
}

TEST(FingerprintRuns, RepeatedKeysAcrossRunsAreMergedOnce) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(8);
  std::set<uint64_t> oracle;
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok());
  const std::vector<uint64_t> keys = Batch(&rng, 5000, &oracle);
  ASSERT_TRUE((*set)->Add(keys).ok());
  // As after a crash: the same fingerprints ingested again.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*set)->Add(keys).ok());
  EXPECT_EQ((*set)->stats().runs, 1u);
  EXPECT_EQ((*set)->stats().keys, keys.size());
  ExpectMatches(**set, oracle, &rng);
}

TEST(FingerprintRuns, RefusesUnsortedInput) {
  TempDir dir("fingerprint_runs_test");
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok());
  const std::vector<uint64_t> unsorted = {3, 1, 2};
  const std::vector<uint64_t> repeated = {1, 2, 2};
  EXPECT_EQ((*set)->Add(unsorted).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*set)->Add(repeated).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*set)->stats().runs, 0u);
}

TEST(FingerprintRuns, ReopensWithEveryKey) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(9);
  std::set<uint64_t> oracle;
  {
    auto set = FingerprintRuns::Open(Opts(dir.path(), true));
    ASSERT_TRUE(set.ok());
    for (int i = 0; i < 30; ++i) ASSERT_TRUE((*set)->Add(Batch(&rng, 2000, &oracle)).ok());
  }  // closed while merges may be pending
  auto set = FingerprintRuns::Open(Opts(dir.path(), true));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ExpectMatches(**set, oracle, &rng);
  ASSERT_TRUE((*set)->WaitIdle().ok());
  ExpectMatches(**set, oracle, &rng);
}

TEST(FingerprintRuns, BackgroundMergesWhileReadersLookUp) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(10);
  std::set<uint64_t> oracle;
  FingerprintRuns::Options o = Opts(dir.path(), true);
  o.max_runs = 4;
  auto set = FingerprintRuns::Open(o);
  ASSERT_TRUE(set.ok());
  const std::vector<uint64_t> first = Batch(&rng, 20000, &oracle);
  ASSERT_TRUE((*set)->Add(first).ok());
  std::atomic<bool> done{false};
  std::atomic<int> misses{0};
  std::thread reader([&] {
    size_t i = 0;
    while (!done.load()) {
      Result<bool> r = (*set)->Contains(first[i++ % first.size()]);
      if (!r.ok() || !*r) misses.fetch_add(1);
    }
  });
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE((*set)->Add(Batch(&rng, 3000, &oracle)).ok());
    // Add waits for the running merge once there are max_runs runs.
    EXPECT_LE((*set)->stats().runs, 5u);
  }
  ASSERT_TRUE((*set)->WaitIdle().ok());
  done = true;
  reader.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_GT((*set)->stats().merges, 0u);
  ExpectMatches(**set, oracle, &rng);
}

TEST(FingerprintRuns, RemovesFilesOfRunsNeverRecorded) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(11);
  std::set<uint64_t> oracle;
  {
    auto set = FingerprintRuns::Open(Opts(dir.path(), false));
    ASSERT_TRUE(set.ok());
    ASSERT_TRUE((*set)->Add(Batch(&rng, 1000, &oracle)).ok());
  }
  // A run written but not in the manifest (the process died in between), and a manifest
  // being replaced.
  std::ofstream(dir.path() / "999.run") << "partial";
  std::ofstream(dir.path() / "MANIFEST.tmp") << "partial";
  auto set = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "999.run"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "MANIFEST.tmp"));
  ExpectMatches(**set, oracle, &rng);
}

TEST(FingerprintRuns, RefusesDamagedFilesByName) {
  TempDir dir("fingerprint_runs_test");
  std::mt19937_64 rng(12);
  std::set<uint64_t> oracle;
  std::filesystem::path run;
  {
    auto set = FingerprintRuns::Open(Opts(dir.path(), false));
    ASSERT_TRUE(set.ok());
    ASSERT_TRUE((*set)->Add(Batch(&rng, 3000, &oracle)).ok());
  }
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().extension() == ".run") run = e.path();
  }
  ASSERT_FALSE(run.empty());
  {
    // One flipped bit in the keys.
    std::fstream f(run, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(4096 + 800);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x10;
    f.seekp(4096 + 800);
    f.write(&c, 1);
  }
  auto damaged = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), Status::Code::kCorruption);
  EXPECT_NE(damaged.status().message().find(run.filename().string()), std::string::npos)
      << damaged.status().ToString();
  // A manifest cut short.
  std::filesystem::resize_file(dir.path() / "MANIFEST", 20);
  auto cut = FingerprintRuns::Open(Opts(dir.path(), false));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("MANIFEST"), std::string::npos);
}

}  // namespace
}  // namespace harvest::state
