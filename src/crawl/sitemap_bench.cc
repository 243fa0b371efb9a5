// sitemap_bench: sitemaps at the protocol's scale (sitemaps.org: 50,000 URLs per sitemap, an
// index of up to 50,000 sitemaps). Generates in-process gzip sitemaps of --urls realistic
// URLs each (shop, news and blog paths, query strings, entities, lastmod / changefreq /
// priority; --distinct different documents, cycled) and a gzip sitemap index of --sitemaps
// entries, then parses the index and every sitemap it lists through extract::SitemapReader
// fed 64 KiB at a time (as a body arrives), each URL canonicalised with url::ParseCanonical
// as the crawl's PageProcessor does, counted and not stored. Prints the parse time (total,
// per sitemap, per URL) and the peak RSS growth (VmHWM from /proc/self/status, its peak
// reset through /proc/self/clear_refs before each run) for a small sitemap, one sitemap and
// all of them: the growth must not depend on the sitemaps' number or size.
//
// Usage: sitemap_bench [--urls N] [--sitemaps N] [--distinct N]   (defaults 50000 1000 16)
// Exit status: 0 when every URL was emitted and canonicalised, 1 otherwise, 2 on bad flags.
// Figures: docs/benchmarks.md "Sitemaps at the protocol's scale", scripts/bench-sitemap.
#include <zlib.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "extract/extract.h"
#include "url/url.h"

namespace {

using harvest::extract::SitemapHint;
using harvest::extract::SitemapReader;

// Streaming gzip of a generated document: only the compressed bytes are kept.
class GzipWriter {
 public:
  GzipWriter() { deflateInit2(&zs_, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY); }
  ~GzipWriter() { deflateEnd(&zs_); }
  void Add(std::string_view s) {
    pending_.append(s);
    if (pending_.size() >= (64u << 10)) Flush(Z_NO_FLUSH);
  }
  std::string Finish() {
    Flush(Z_FINISH);
    return std::move(out_);
  }
  uint64_t raw_bytes() const { return raw_; }

 private:
  void Flush(int mode) {
    raw_ += pending_.size();
    zs_.next_in = reinterpret_cast<Bytef*>(pending_.data());
    zs_.avail_in = static_cast<uInt>(pending_.size());
    char buf[64 * 1024];
    do {
      zs_.next_out = reinterpret_cast<Bytef*>(buf);
      zs_.avail_out = sizeof(buf);
      deflate(&zs_, mode);
      out_.append(buf, sizeof(buf) - zs_.avail_out);
    } while (zs_.avail_out == 0 || (mode == Z_FINISH && zs_.avail_in > 0));
    pending_.clear();
  }
  z_stream zs_{};
  std::string pending_, out_;
  uint64_t raw_ = 0;
};

// xorshift64*: a deterministic stream of "random" choices.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
};

constexpr const char* kWords[] = {
    "garden",  "kitchen", "outdoor",  "running", "winter", "summer", "classic", "vintage",
    "leather", "cotton",  "wireless", "compact", "family", "travel", "premium", "organic",
    "local",   "council", "election", "market",  "review", "guide",  "recipes", "science"};
constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);

std::string Slug(Rng* rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i > 0) s += '-';
    s += kWords[rng->Below(kWordCount)];
  }
  return s;
}

// One <url> entry of sitemap `doc`, URL number `i`: realistic shapes of large sites.
std::string Entry(size_t doc, size_t i, Rng* rng) {
  static constexpr const char* kFreq[] = {"daily", "weekly", "monthly", "hourly", "yearly"};
  std::string host = "https://www.site" + std::to_string(doc) + ".example.com";
  std::string loc;
  switch (i % 4) {
    case 0:
      loc = host + "/products/" + Slug(rng, 3) + "-" + std::to_string(100000 + i) +
            "?color=" + kWords[rng->Below(kWordCount)] + "&amp;size=" + std::to_string(i % 13);
      break;
    case 1:
      loc = host + "/news/20" + std::to_string(10 + i % 15) + "/" + std::to_string(1 + i % 12) +
            "/" + Slug(rng, 5) + ".html";
      break;
    case 2:
      loc = host + "/blog/" + kWords[rng->Below(kWordCount)] + "/" + Slug(rng, 4) + "/";
      break;
    default:
      loc = host + "/c/" + kWords[rng->Below(kWordCount)] + "/" + kWords[rng->Below(kWordCount)] +
            "?page=" + std::to_string(1 + i % 40) + "&amp;sort=price_asc";
      break;
  }
  char lastmod[40];
  std::snprintf(lastmod, sizeof(lastmod), "20%02zu-%02zu-%02zuT%02zu:%02zu:00+00:00", 18 + i % 7,
                1 + i % 12, 1 + i % 28, i % 24, i % 60);
  return "<url>\n  <loc>" + loc + "</loc>\n  <lastmod>" + lastmod + "</lastmod>\n  <changefreq>" +
         kFreq[i % 5] + "</changefreq>\n  <priority>0." + std::to_string(1 + i % 9) +
         "</priority>\n</url>\n";
}

struct Doc {
  std::string gz;
  uint64_t raw_bytes = 0;
};

Doc MakeSitemap(size_t doc, size_t urls) {
  GzipWriter w;
  Rng rng{0x9E3779B97F4A7C15ULL ^ (doc + 1)};
  w.Add(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
  for (size_t i = 0; i < urls; ++i) w.Add(Entry(doc, i, &rng));
  w.Add("</urlset>\n");
  Doc d;
  d.gz = w.Finish();
  d.raw_bytes = w.raw_bytes();
  return d;
}

Doc MakeIndex(size_t sitemaps) {
  GzipWriter w;
  w.Add(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
  for (size_t i = 0; i < sitemaps; ++i) {
    w.Add("<sitemap><loc>https://www.example.com/sitemaps/products-" + std::to_string(i) +
          ".xml.gz</loc><lastmod>2024-05-01</lastmod></sitemap>\n");
  }
  w.Add("</sitemapindex>\n");
  Doc d;
  d.gz = w.Finish();
  d.raw_bytes = w.raw_bytes();
  return d;
}

// VmHWM (peak RSS) in KiB; its peak is reset by ResetPeak.
long PeakKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

bool ResetPeak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

struct Parsed {
  uint64_t emitted = 0;
  uint64_t canonical = 0;
  uint64_t url_bytes = 0;
  bool ok = true;
};

// Parses one gzip document as the crawl does: fed as it arrives, every URL canonicalised.
void Parse(const std::string& gz, const harvest::url::CanonOptions& canon, Parsed* p,
           std::vector<std::string>* keep = nullptr) {
  SitemapReader reader([&](std::string_view url, const SitemapHint&) {
    ++p->emitted;
    std::optional<harvest::url::Url> u = harvest::url::ParseCanonical(url, nullptr, canon);
    if (!u) return;
    ++p->canonical;
    p->url_bytes += u->href().size();
    if (keep != nullptr) keep->emplace_back(u->href());
  });
  constexpr size_t kChunk = 64 * 1024;
  for (size_t at = 0; at < gz.size(); at += kChunk) {
    reader.Feed(std::string_view(gz).substr(at, kChunk));
  }
  reader.Finish();
  if (!reader.error().empty() || reader.truncated()) p->ok = false;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU seconds of the process (the wall time on a shared machine includes others' turns).
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// VmRSS in KiB.
long RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  size_t urls = 50000, sitemaps = 1000, distinct = 16;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: sitemap_bench [--urls N] [--sitemaps N] [--distinct N]\n");
      return 2;
    }
    const size_t v = std::strtoull(argv[++i], nullptr, 10);
    if (flag == "--urls") {
      urls = v;
    } else if (flag == "--sitemaps") {
      sitemaps = v;
    } else if (flag == "--distinct") {
      distinct = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (urls == 0 || urls > harvest::extract::kMaxSitemapUrls || sitemaps == 0 || distinct == 0 ||
      sitemaps > harvest::extract::kMaxSitemapUrls) {
    std::fprintf(stderr, "--urls and --sitemaps: 1..50000, --distinct >= 1\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const harvest::url::CanonOptions canon;

  auto t0 = Clock::now();
  std::vector<Doc> docs;
  for (size_t d = 0; d < std::min(distinct, sitemaps); ++d) docs.push_back(MakeSitemap(d, urls));
  const Doc small = MakeSitemap(distinct + 1, std::max<size_t>(1, urls / 50));
  const Doc index = MakeIndex(sitemaps);
  std::printf(
      "generated %zu distinct sitemaps of %zu URLs (%.1f MiB XML, %.2f MiB gzip each) and "
      "an index of %zu sitemaps (%.1f KiB gzip) in %.1f s\n",
      docs.size(), urls, docs[0].raw_bytes / 1048576.0, docs[0].gz.size() / 1048576.0, sitemaps,
      index.gz.size() / 1024.0, Seconds(Clock::now() - t0));
  // Warm-up: the Public Suffix List and the allocator's first arenas are no sitemap's cost.
  Parsed warm;
  Parse(small.gz, canon, &warm);

  bool ok = warm.ok;
  const bool peak_reset = ResetPeak();
  if (!peak_reset) std::printf("(cannot reset VmHWM: growth is from the process's peak)\n");

  auto run = [&](const char* what, const std::vector<const Doc*>& list, uint64_t want) {
    ResetPeak();
    const long before = PeakKib();
    Parsed p;
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds();
    for (const Doc* d : list) Parse(d->gz, canon, &p);
    const double cpu = CpuSeconds() - cpu_start;
    const double s = Seconds(Clock::now() - start);
    const long after = PeakKib();
    std::printf("%-16s %9" PRIu64
                " URLs: %8.2f s wall, %8.2f s CPU, %7.1f ms CPU/sitemap, "
                "%5.2f us CPU/URL; peak RSS growth %6.2f MiB\n",
                what, p.emitted, s, cpu, cpu * 1000 / list.size(),
                cpu * 1e6 / std::max<uint64_t>(1, p.emitted), (after - before) / 1024.0);
    if (!p.ok || p.emitted != want || p.canonical != want) {
      std::printf("  FAILED: %" PRIu64 " emitted, %" PRIu64 " canonical, want %" PRIu64 "\n",
                  p.emitted, p.canonical, want);
      ok = false;
    }
  };
  std::printf("RSS before parsing %.1f MiB (the generated gzip sitemaps included)\n",
              RssKib() / 1024.0);

  // The index: its sitemaps' URLs are what the crawl admits (held, as links).
  std::vector<std::string> listed;
  {
    ResetPeak();
    const long before = PeakKib();
    Parsed p;
    const auto start = Clock::now();
    Parse(index.gz, canon, &p, &listed);
    std::printf("%-16s %9" PRIu64
                " URLs: %8.2f s wall (kept: the sitemaps to fetch); peak RSS growth %6.2f MiB\n",
                "index", p.emitted, Seconds(Clock::now() - start), (PeakKib() - before) / 1024.0);
    if (!p.ok || listed.size() != sitemaps) ok = false;
  }
  const size_t small_urls = std::max<size_t>(1, urls / 50);
  run("1 small sitemap", {&small}, small_urls);
  run("1 sitemap", {&docs[0]}, urls);
  std::vector<const Doc*> all;
  for (size_t i = 0; i < listed.size(); ++i) all.push_back(&docs[i % docs.size()]);
  const std::string all_name = std::to_string(all.size()) + " sitemaps";
  run(all_name.c_str(), all, urls * all.size());
  // For comparison, the same sitemap collected whole (ParseSitemap keeps every URL): what
  // the growth above would be if the reader held the document's URLs.
  {
    ResetPeak();
    const long before = PeakKib();
    harvest::extract::SitemapResult r = harvest::extract::ParseSitemap(docs[0].gz);
    std::printf("%-16s %9zu URLs kept by ParseSitemap: peak RSS growth %6.2f MiB\n", "(comparison)",
                r.urls.size(), (PeakKib() - before) / 1024.0);
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
