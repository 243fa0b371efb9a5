// SimHash64 over page-sized texts (the page processor's per-page cost), and SimHashIndex at
// 10 M fingerprints: FindNear latency (hits and misses apart), Insert throughput and bytes per
// fingerprint. docs/benchmarks.md "Near-duplicate index".
//   build/src/dedup/simhash_benchmark --benchmark_repetitions=3
//   build/src/dedup/simhash_benchmark --benchmark_filter=SimHash64 (the text cases only:
//   BM_SimHash64 is version 1, BM_SimHash64V2 version 2)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

constexpr uint64_t kEntries = 10'000'000;
constexpr uint64_t kPlanted = 100'000;  // every 100th entry has a near variant queried
constexpr int kQueries = 100'000;

// Extracted page text of about `bytes`: words of 1-12 letters (some capitalised, some
// digits, a few UTF-8), single spaces, punctuation now and then, as ExtractHtml leaves it.
std::string PageText(size_t bytes) {
  static const char* kVocab[] = {"the",         "of",           "and",     "to",      "in",
                                 "a",           "council",      "park",    "river",   "cycle",
                                 "path",        "mayor",        "Tuesday", "approve", "plan",
                                 "site",        "former",       "city",    "report",  "minutes",
                                 "caf\xc3\xa9", "na\xc3\xafve", "2024",    "12",      "Example",
                                 "News",        "section",      "related", "story"};
  std::mt19937 rng(11);
  std::string out;
  while (out.size() < bytes) {
    out += kVocab[rng() % (sizeof(kVocab) / sizeof(kVocab[0]))];
    const uint32_t r = rng() % 16;
    out += r == 0 ? ", " : r == 1 ? ". " : " ";
  }
  return out;
}

// Items = pages, bytes = text bytes.
void BM_SimHash64(benchmark::State& state) {
  const std::string text = PageText(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(SimHash64(text));
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_SimHash64)->Arg(64)->Arg(2 << 10)->Arg(4 << 10)->Arg(20 << 10);

// The same texts, SimHash version 2 (what new crawls use).
void BM_SimHash64V2(benchmark::State& state) {
  const std::string text = PageText(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(SimHash64V2(text));
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_SimHash64V2)->Arg(64)->Arg(2 << 10)->Arg(4 << 10)->Arg(20 << 10);

uint64_t FlipBits(uint64_t h, int bits, std::mt19937_64* rng) {
  for (int i = 0; i < bits; ++i) h ^= uint64_t{1} << ((*rng)() % 64);
  return h;
}

struct Fixture {
  std::unique_ptr<SimHashIndex> index;
  std::vector<uint64_t> hit_queries;   // within distance 1..3 of a stored entry
  std::vector<uint64_t> miss_queries;  // random: nothing within 3 (checked)
  double insert_seconds = 0;
};

// Built once for the lookup benchmarks: 10 M random fingerprints (bounded at 10 M).
const Fixture& Shared() {
  static const Fixture* f = [] {
    auto* fx = new Fixture;
    std::mt19937_64 rng(42);
    std::vector<uint64_t> hashes(kEntries);
    for (uint64_t& h : hashes) h = rng();
    fx->index = std::make_unique<SimHashIndex>(kEntries);
    for (uint64_t i = 0; i < kEntries; ++i) fx->index->Insert(hashes[i], i);
    for (uint64_t p = 0; p < kPlanted && fx->hit_queries.size() < kQueries; ++p) {
      const uint64_t stored = hashes[(p * 100) % kEntries];
      fx->hit_queries.push_back(FlipBits(stored, 1 + static_cast<int>(rng() % 3), &rng));
    }
    while (fx->miss_queries.size() < kQueries) {
      const uint64_t q = rng();
      if (!fx->index->FindNear(q).has_value()) fx->miss_queries.push_back(q);
    }
    return fx;
  }();
  return *f;
}

void RunLookups(benchmark::State& state, const std::vector<uint64_t>& queries, bool want_hit) {
  const SimHashIndex& index = *Shared().index;
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    found += index.FindNear(queries[i]).has_value();
    if (++i == queries.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  if (want_hit && found != static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("a planted neighbour was missed");
  if (!want_hit && found != 0) state.SkipWithError("a miss query found something");
  state.counters["bytes_per_fp"] = static_cast<double>(index.memory_bytes()) / index.size();
}

void BM_SimHashFindNearHit10M(benchmark::State& state) {
  RunLookups(state, Shared().hit_queries, true);
}
BENCHMARK(BM_SimHashFindNearHit10M)->Unit(benchmark::kNanosecond);

void BM_SimHashFindNearMiss10M(benchmark::State& state) {
  RunLookups(state, Shared().miss_queries, false);
}
BENCHMARK(BM_SimHashFindNearMiss10M)->Unit(benchmark::kNanosecond);

// 10 M inserts into an empty index bounded at 10 M, then 10 M more that each evict the
// oldest (steady state). Items = inserts.
void BM_SimHashInsert10M(benchmark::State& state) {
  const bool evicting = state.range(0) != 0;
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    state.PauseTiming();
    auto index = std::make_unique<SimHashIndex>(kEntries);
    if (evicting) {
      for (uint64_t i = 0; i < kEntries; ++i) index->Insert(rng(), i);
    }
    state.ResumeTiming();
    for (uint64_t i = 0; i < kEntries; ++i) index->Insert(rng(), i);
    state.counters["bytes_per_fp"] = static_cast<double>(index->memory_bytes()) / index->size();
    state.PauseTiming();
    index.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kEntries);
}
BENCHMARK(BM_SimHashInsert10M)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace harvest::dedup
