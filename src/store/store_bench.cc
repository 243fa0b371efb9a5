// Micro-benchmarks: WARC writing (digest + gzip + append) and reading.
//
// BM_Gzip and BM_WriteFetch use real pages of the test web (testdata/html, 6-28 KB, as
// `harvest testweb` serves them), either as served to a crawler that asks for gzip (the
// default Accept-Encoding: the payload is stored as received, already compressed, ~4 KB) or
// as plain HTML (a server that does not compress). docs/benchmarks.md "WARC writing".
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <random>

#include "store/internal.h"
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

// The test web's pages: plain (gzip_body false) or gzip-encoded as the test web sends them.
std::vector<std::string> TestWebPages(bool gzip_body) {
  std::vector<std::string> pages;
  for (const auto& f : testing::FilesWithSuffix(HARVEST_STORE_TESTDATA "/html", ".html")) {
    std::string html = testing::ReadFile(f);
    if (!gzip_body) {
      pages.push_back(std::move(html));
      continue;
    }
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, html.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(html.data());
    z.avail_in = static_cast<uInt>(html.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    pages.push_back(std::move(out));
  }
  return pages;
}

// A fetch as the crawler stores it: browser-like request head, the test web's response
// head, 20 outlinks (the test web's default), via and hops.
Capture TestWebCapture(int i, const std::string& body, bool gzip_body) {
  char host[32];
  std::snprintf(host, sizeof(host), "h%04d.test", i % 4000);
  std::string url = std::string("http://") + host + "/p/" + std::to_string(i % 25);
  Capture c;
  c.target_uri = url;
  c.fetch_time_us = 1795663201123456 + i;
  c.ip = "127.0.0.1";
  c.request_header = "GET /p/" + std::to_string(i % 25) + " HTTP/1.1\r\nHost: " + host +
                     "\r\nUser-Agent: Harvest/0.1 (+https://github.com/harvest-crawler/harvest)"
                     "\r\nAccept: */*\r\nAccept-Encoding: gzip, br, zstd\r\n\r\n";
  c.response_header =
      "HTTP/1.1 200 OK\r\nDate: Fri, 27 Nov 2026 04:28:23 GMT\r\nServer: harvest-testweb\r\n"
      "Content-Type: text/html; charset=utf-8\r\nETag: \"2693efb48e7a0a1f-gz\"\r\n"
      "Last-Modified: Sun, 01 Nov 2026 00:00:00 GMT\r\nVary: Accept-Encoding\r\n" +
      std::string(gzip_body ? "Content-Encoding: gzip\r\n" : "") +
      "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: keep-alive\r\n\r\n";
  c.payload = body;
  c.status = 200;
  c.mime = "text/html";
  c.via = std::string("http://") + host + "/";
  c.hops = 2;
  for (int k = 0; k < 20; ++k) {
    c.outlinks.push_back(std::string("http://h") + std::to_string(1000 + (i * 7 + k * 13) % 4000) +
                         ".test/p/" + std::to_string((i + k) % 25));
  }
  c.surt = std::string("test,") + host + ")/p/" + std::to_string(i % 25);
  return c;
}

// The uncompressed record texts (one per gzip member) of a WARC file written by WarcWriter.
std::vector<std::string> RecordTexts(const std::filesystem::path& warc) {
  std::string data = testing::ReadFile(warc);
  std::vector<std::string> texts;
  z_stream z{};
  inflateInit2(&z, 31);
  z.next_in = reinterpret_cast<Bytef*>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  std::string text;
  char buf[16384];
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int rc = inflate(&z, Z_NO_FLUSH);
    text.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END) {
      texts.push_back(std::move(text));
      text.clear();
      inflateReset(&z);
    } else if (rc != Z_OK) {
      break;
    }
  }
  inflateEnd(&z);
  return texts;
}

// libdeflate alone at level range(0) over the exact record texts of the test web's fetches
// (request, response, metadata records as the writer hands them to the compressor; the
// warcinfo record left out). range(1): 1 = the payload gzip-encoded as served, 0 = plain
// HTML. Reports input MB/s and the compressed size in % of the input.
void BM_Gzip(benchmark::State& state) {
  const bool gz = state.range(1) != 0;
  std::vector<std::string> pages = TestWebPages(gz);
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  for (size_t i = 0; i < pages.size(); ++i) {
    (void)(*w)->WriteResponse(TestWebCapture(static_cast<int>(i), pages[i], gz));
  }
  std::filesystem::path file = (*w)->current_file();
  (void)(*w)->Close();
  std::vector<std::string> texts = RecordTexts(file);
  texts.erase(texts.begin());  // warcinfo
  internal::GzipCompressor gzip(static_cast<int>(state.range(0)));
  uint64_t in = 0, out = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      Result<std::string> m = gzip.Member(t);
      in += t.size();
      out += m->size();
      benchmark::DoNotOptimize(m);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(in));
  state.counters["ratio_pct"] = 100.0 * static_cast<double>(out) / static_cast<double>(in);
}
BENCHMARK(BM_Gzip)->ArgsProduct({{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 0}})->ArgNames({"level", "gz"});

// The response records of the test web's gzip-encoded fetches at level range(1), deflated
// whole (range(0) = 0) or with the payload in stored blocks (range(0) = 1, what the writer
// does for a payload with a Content-Encoding). Reports input MB/s and the ratio.
void BM_GzipEncodedResponse(benchmark::State& state) {
  const bool stored = state.range(0) != 0;
  std::vector<std::string> pages = TestWebPages(true);
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  for (size_t i = 0; i < pages.size(); ++i) {
    Capture c = TestWebCapture(static_cast<int>(i), pages[i], true);
    c.request_header.clear();
    c.outlinks.clear();
    c.via.clear();
    (void)(*w)->WriteResponse(c);
  }
  std::filesystem::path file = (*w)->current_file();
  (void)(*w)->Close();
  std::vector<std::string> texts = RecordTexts(file);
  texts.erase(texts.begin());  // warcinfo
  internal::GzipCompressor gzip(static_cast<int>(state.range(1)));
  std::string out;
  uint64_t in = 0, compressed = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      out.clear();
      if (stored) {
        // WARC head CRLF CRLF, HTTP head CRLF CRLF, payload, CRLF CRLF
        const size_t at = t.find("\r\n\r\n", t.find("\r\n\r\n") + 4) + 4;
        const std::string_view v = t;
        (void)gzip.AppendMemberStored(v.substr(0, at), v.substr(at, v.size() - at - 4),
                                      v.substr(v.size() - 4), &out);
      } else {
        (void)gzip.AppendMember(t, &out);
      }
      in += t.size();
      compressed += out.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(in));
  state.counters["ratio_pct"] = 100.0 * static_cast<double>(compressed) / static_cast<double>(in);
}
BENCHMARK(BM_GzipEncodedResponse)->ArgsProduct({{0, 1}, {1, 6}})->ArgNames({"stored", "level"});

// The writer's whole per-fetch path (digests, record building, gzip, write(2), CDXJ line)
// for the test web's pages at gzip level range(0); range(1) as in BM_Gzip. Reports fetches/s
// and the WARC bytes per fetch.
void BM_WriteFetch(benchmark::State& state) {
  const bool gz = state.range(1) != 0;
  testing::TempDir dir;
  WarcOptions o;
  o.dir = dir.path();
  o.gzip_level = static_cast<int>(state.range(0));
  o.fsync_on_flush = false;
  auto w = WarcWriter::Open(o);
  std::vector<std::string> pages = TestWebPages(gz);
  std::vector<Capture> captures;
  for (int i = 0; i < 64; ++i) {
    Capture c = TestWebCapture(i, pages[static_cast<size_t>(i) % pages.size()], gz);
    c.payload_digest = PayloadDigest(c.payload);  // the process threads compute it
    captures.push_back(std::move(c));
  }
  size_t i = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto loc = (*w)->WriteResponse(captures[i]);
    benchmark::DoNotOptimize(loc);
    if (++i == captures.size()) i = 0;
    if (++n % 1024 == 0) (void)(*w)->Flush();  // CDXJ lines leave at group flushes
  }
  (void)(*w)->Close();
  state.SetItemsProcessed(state.iterations());
  state.counters["warc_bytes_per_fetch"] =
      static_cast<double>((*w)->bytes_written()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WriteFetch)->ArgsProduct({{1, 3, 6}, {1, 0}})->ArgNames({"level", "gz"});

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

// Sorting a crawl's CDXJ index when its WARC file closes (SortCdxjFile): lines in crawl order
// (hosts interleaved, as a crawl of many hosts appends them), ~300 bytes each like the
// bench-peers crawl's (50,000 lines = ~15 MB, above the 8 MiB run budget).
void BM_SortCdxjFile(benchmark::State& state) {
  const int kLines = static_cast<int>(state.range(0));
  const int kHosts = 1000;
  std::string text;
  for (int i = 0; i < kLines; ++i) {
    const int host = i % kHosts, page = i / kHosts;
    char line[400];
    const int n = std::snprintf(
        line, sizeof(line),
        "test,peers,h%04d:32947)/p/%d.htm 20261129073049 {\"url\":\"http://h%04d.peers.test:"
        "32947/p/%d.htm\",\"mime\":\"text/html\",\"status\":\"200\",\"digest\":\"sha256:"
        "G7E5JVRAKFRI4VOKLOOMLMHY46ML3NTI7B76AFNKPCUL3B4FWH%04d====\",\"length\":9%03d,"
        "\"offset\":%d,\"filename\":\"harvest-20261129073049-00000.warc.gz\"}\n",
        host, page, host, page, i % 10000, i % 1000, i * 9000);
    text.append(line, static_cast<size_t>(n));
  }
  testing::TempDir dir;
  const std::filesystem::path cdxj = dir.path() / "x.cdxj";
  for (auto _ : state) {
    state.PauseTiming();
    testing::WriteFile(cdxj, text);
    state.ResumeTiming();
    Status s = SortCdxjFile(cdxj, /*sync=*/false);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.counters["mib"] = static_cast<double>(text.size()) / (1 << 20);
}
BENCHMARK(BM_SortCdxjFile)->Arg(5000)->Arg(50000)->Arg(200000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harvest::store
