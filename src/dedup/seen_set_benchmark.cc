// SeenSet::InsertIfNew throughput: 10 M fresh fingerprints, then 10 M repeats.
#include <benchmark/benchmark.h>

#include "base/hash.h"
#include "dedup/dedup.h"

namespace harvest::dedup {
namespace {

constexpr uint64_t kUrls = 10'000'000;

void BM_SeenSetInsertNew10M(benchmark::State& state) {
  for (auto _ : state) {
    SeenSet seen(SeenSetOptions{.expected_urls = kUrls});
    uint64_t added = 0;
    for (uint64_t i = 0; i < kUrls; ++i) added += seen.InsertIfNew(Mix64(i + 1));
    benchmark::DoNotOptimize(added);
    state.counters["bytes_per_url"] = static_cast<double>(seen.memory_bytes()) / kUrls;
    state.counters["false_positives"] = static_cast<double>(seen.false_positives());
  }
  state.SetItemsProcessed(state.iterations() * kUrls);
}
BENCHMARK(BM_SeenSetInsertNew10M)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_SeenSetInsertRepeat10M(benchmark::State& state) {
  SeenSet seen(SeenSetOptions{.expected_urls = kUrls});
  for (uint64_t i = 0; i < kUrls; ++i) seen.InsertIfNew(Mix64(i + 1));
  for (auto _ : state) {
    uint64_t added = 0;
    for (uint64_t i = 0; i < kUrls; ++i) added += seen.InsertIfNew(Mix64(i + 1));
    benchmark::DoNotOptimize(added);
  }
  state.SetItemsProcessed(state.iterations() * kUrls);
}
BENCHMARK(BM_SeenSetInsertRepeat10M)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace harvest::dedup
