// Add + Next + Complete throughput with 100 k hosts (FakeClock; delay charged per host).
#include <benchmark/benchmark.h>

#include "frontier/frontier.h"

namespace harvest::frontier {
namespace {

constexpr int kHosts = 100'000;
constexpr int kUrlsPerHost = 10;

void BM_FrontierAddNextComplete(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    FakeClock clock;
    FrontierOptions o;
    o.default_delay = std::chrono::milliseconds(1000);
    Frontier f(o, &clock);
    std::vector<UrlItem> items;
    items.reserve(kHosts * kUrlsPerHost);
    for (int u = 0; u < kUrlsPerHost; ++u) {
      for (int h = 0; h < kHosts; ++h) {
        UrlItem item;
        item.host = "h" + std::to_string(h) + ".test";
        item.url = "http://" + item.host + "/" + std::to_string(u);
        item.priority = u % 4;
        items.push_back(std::move(item));
      }
    }
    state.ResumeTiming();
    for (auto& item : items) f.Add(std::move(item));
    size_t done = 0;
    while (!f.Idle()) {
      while (auto l = f.Next()) {
        clock.Advance(std::chrono::microseconds(10));  // 100 k requests/s of simulated time
        f.Complete(*l, Completion{});
        ++done;
      }
      if (auto t = f.NextWakeup(); t && *t > clock.Now()) clock.Advance(*t - clock.Now());
    }
    benchmark::DoNotOptimize(done);
  }
  state.SetItemsProcessed(state.iterations() * kHosts * kUrlsPerHost);
}
BENCHMARK(BM_FrontierAddNextComplete)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace harvest::frontier
