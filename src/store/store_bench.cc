// Micro-benchmarks: WARC writing (digest + gzip + append) and reading.
#include <benchmark/benchmark.h>

#include <random>

#include "store/store.h"
#include "store/store_test_util.h"

namespace harvest::store {
namespace {

// An HTML-like 20 KiB payload: compressible like real pages, not trivially so.
std::string HtmlPayload() {
  std::mt19937 rng(7);
  std::string s;
  static const char* kWords[] = {"<div class=\"item\">",
                                 "</div>",
                                 "<a href=\"/page/",
                                 "\">",
                                 "</a>",
                                 "lorem",
                                 "ipsum",
                                 "dolor",
                                 "sit",
                                 "amet",
                                 "crawler"};
  while (s.size() < 20 * 1024) {
    s += kWords[rng() % 11];
    s += std::to_string(rng() % 1000);
    s += ' ';
  }
  return s;
}

void BM_WriteResponse(benchmark::State& state) {
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.gzip_level = static_cast<int>(state.range(0));
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  Capture c = testing::SampleCapture("http://example.com/page", HtmlPayload());
  c.outlinks.assign(50, "http://example.com/page/123");
  for (auto _ : state) {
    auto loc = (*w)->WriteResponse(c);
    benchmark::DoNotOptimize(loc);
  }
  (void)(*w)->Close();
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(c.payload.size()));
  state.counters["compressed_bytes_per_fetch"] =
      static_cast<double>((*w)->bytes_written()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WriteResponse)->Arg(1)->Arg(6)->Arg(9);

void BM_PayloadDigestSha256(benchmark::State& state) {
  std::string p = HtmlPayload();
  for (auto _ : state) benchmark::DoNotOptimize(PayloadDigest(p));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(p.size()));
}
BENCHMARK(BM_PayloadDigestSha256);

void BM_ReadAll(benchmark::State& state) {
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  Capture c = testing::SampleCapture("http://example.com/page", HtmlPayload());
  for (int i = 0; i < 1000; ++i) (void)(*w)->WriteResponse(c);
  std::filesystem::path file = (*w)->current_file();
  (void)(*w)->Close();
  for (auto _ : state) {
    auto r = WarcReader::Open(file);
    int n = 0;
    while (true) {
      auto rec = (*r)->Next();
      if (!rec.ok() || !rec->has_value()) break;
      ++n;
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 1000);  // fetches (request + response each)
}
BENCHMARK(BM_ReadAll)->Unit(benchmark::kMillisecond);

// Crash recovery of a WARC of range(0) fetches whose last range(1) fetches have no CDXJ line
// (as a kill -9 before Flush leaves it; range(1) == range(0): an empty CDXJ). Only the WARC
// after the last indexed record is read (the CDXJ is read whole).
void BM_RecoverWarc(benchmark::State& state) {
  const int kFetches = static_cast<int>(state.range(0));
  const int unindexed = static_cast<int>(state.range(1));
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  Capture c = testing::SampleCapture("http://example.com/page", HtmlPayload());
  for (int i = 0; i < kFetches; ++i) {
    (void)(*w)->WriteResponse(c);
    if (i + 1 == kFetches - unindexed) (void)(*w)->Flush();
  }
  std::filesystem::path warc = (*w)->current_file();
  std::filesystem::path cdxj = warc;
  cdxj.replace_extension().replace_extension(".cdxj");
  std::string crash_warc = testing::ReadFile(warc);
  std::string crash_cdxj = testing::ReadFile(cdxj);
  (void)(*w)->Close();
  for (auto _ : state) {
    state.PauseTiming();
    testing::WriteFile(warc, crash_warc);
    testing::WriteFile(cdxj, crash_cdxj);
    state.ResumeTiming();
    auto r = RecoverWarc(warc);
    if (!r.ok() || r->cdxj_lines_added != static_cast<uint64_t>(unindexed)) {
      state.SkipWithError("RecoverWarc did not index the unflushed fetches");
      break;
    }
  }
  state.counters["warc_mib"] = static_cast<double>(crash_warc.size()) / (1 << 20);
}
BENCHMARK(BM_RecoverWarc)
    ->Args({5000, 10})
    ->Args({20000, 10})
    ->Args({5000, 5000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harvest::store
