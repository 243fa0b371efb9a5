// Throughput of RunAudit over a synthetic polite crawl: 1000 hosts, requests 1 s apart per
// host, realistic line shape (about 230 bytes per line).
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>

#include "audit/audit.h"

namespace harvest::audit {
namespace {

// `ips` > 0: each line also carries "ip", host h at 127.0.0.(1 + h % ips).
std::string MakeLog(int lines, int hosts, nlohmann::json* manifest, int ips = 0) {
  std::string log;
  log.reserve(size_t(lines) * 240);
  nlohmann::json host_list = nlohmann::json::array();
  for (int h = 0; h < hosts; ++h)
    host_list.push_back({{"host", "h" + std::to_string(h) + ".test"},
                         {"crawl_delay_ms", 0},
                         {"must_fetch", nlohmann::json::array()}});
  const int64_t t0 = 1700000000000000;
  char buf[512];
  for (int i = 0; i < lines; ++i) {
    int h = i % hosts;
    int64_t n = i / hosts;
    int64_t start = t0 + n * 1'100'000 + h;
    std::snprintf(buf, sizeof buf,
                  R"({"host":"h%d.test","path":"/p/%lld?b=2&a=1","page":"h%d.test/p/%lld",)"
                  R"("start_us":%lld,"end_us":%lld,"status":200,"bytes":1234,"conn":%d,)"
                  R"("kind":"page","disallowed":false)",
                  h, (long long)n, h, (long long)n, (long long)start, (long long)(start + 12000),
                  h);
    log += buf;
    if (ips > 0) {
      std::snprintf(buf, sizeof buf, R"(,"ip":"127.0.0.%d")", 1 + h % ips);
      log += buf;
    }
    log += "}\n";
    if (n < 20)
      (*host_list[h]["must_fetch"].get_ptr<nlohmann::json::array_t*>())
          .push_back("h" + std::to_string(h) + ".test/p/" + std::to_string(n));
  }
  *manifest = {{"hosts", host_list}};
  return log;
}

void BM_RunAudit(benchmark::State& state) {
  nlohmann::json manifest;
  std::string log = MakeLog(int(state.range(0)), 1000, &manifest);
  for (auto _ : state) {
    std::istringstream in(log);
    Result<AuditReport> r = RunAudit(in, manifest);
    if (!r.ok() || !r->Passed()) state.SkipWithError("audit of a clean log failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * int64_t(log.size()));
}
BENCHMARK(BM_RunAudit)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The same clean log audited with 1000 restart times given: the cost of tracking each page's
// latest final answer (no request is a re-fetch, so every restart is checked for nothing).
void BM_RunAuditWithRestarts(benchmark::State& state) {
  nlohmann::json manifest;
  std::string log = MakeLog(int(state.range(0)), 1000, &manifest);
  AuditOptions options;
  for (int i = 0; i < 1000; ++i) options.restarts_us.push_back(1700000000000000 + i * 997'000);
  for (auto _ : state) {
    std::istringstream in(log);
    Result<AuditReport> r = RunAudit(in, manifest, options);
    if (!r.ok() || !r->Passed()) state.SkipWithError("audit of a clean log failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RunAuditWithRestarts)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The same crawl with every line carrying "ip" (1000 hosts over 20 addresses) and the per-IP
// checks on: the cost of the address table and the in-flight heaps.
void BM_RunAuditPerIp(benchmark::State& state) {
  nlohmann::json manifest;
  std::string log = MakeLog(int(state.range(0)), 1000, &manifest, 20);
  AuditOptions options;
  options.per_ip_limit = 1000;
  options.per_ip_gap = std::chrono::milliseconds(0);
  for (auto _ : state) {
    std::istringstream in(log);
    Result<AuditReport> r = RunAudit(in, manifest, options);
    if (!r.ok() || !r->Passed() || !r->per_ip.available)
      state.SkipWithError("audit of a clean log failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RunAuditPerIp)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harvest::audit
