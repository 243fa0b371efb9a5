// state_scale_bench, phase 3: the records a crawl writes per fetched page, then the crawl's
// point lookups timed kind by kind (scale_bench.h; docs/benchmarks.md, "State at scale:
// point lookups").
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dedup/dedup.h"
#include "frontier/frontier.h"
#include "state/scale_bench.h"

namespace harvest::state::scale_bench {
namespace {

// Bytes the calling thread read through read(2)/pread(2) (/proc/thread-self/io `rchar`): its
// table reads, from the page cache or the disk (not those of the compaction threads).
uint64_t BytesRead() {
  std::ifstream in("/proc/thread-self/io");
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

std::string Digest(uint64_t a) {
  static constexpr char kBase32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string d = "sha1:";
  uint64_t st = a;
  uint64_t bits = SplitMix(&st);
  for (int i = 0; i < 32; ++i) {
    if (i == 12) bits = SplitMix(&st);
    d.push_back(kBase32[bits & 31]);
    bits >>= 5;
  }
  return d;
}

}  // namespace

uint64_t FetchedFp(uint64_t seed, uint64_t i) {
  uint64_t st = seed ^ 0x5EED0F5EED0F5EEDull ^ (i * 0x9E3779B97F4A7C15ull);
  return SplitMix(&st);
}

// Phase 3 (--fetched F): the records a crawl writes per fetched page — the seen record
// (MarkDone), a depth note for a quarter of them (NoteDepth: a shorter path found), the
// payload digest and the page record (PutStoredFetch) — then, once RocksDB's flushes and
// compactions have settled, L point lookups of each kind the crawl makes, timed kind by kind
// (CPU time of the calling thread):
//   admitted      seen()->Contains of an admitted URL (admission's exact check on a Bloom hit)
//   absent        seen()->Contains of a URL never seen (a Bloom false positive: admitted + seen)
//   seen record   GetSeen of a fetched page (sitemap hints, recrawls)
//   depth         NotedDepth of a fetched page (AdmitLinks, per page with links; 3/4 absent)
//   digest new    FindDigest of a new payload (WarcSink, per stored response)
//   digest dup    FindDigest of a stored payload
bool FetchedAndLookups(const Flags& f, StateDb* db, const std::vector<uint64_t>& admitted_fps) {
  const double cpu0 = CpuSeconds(), tcpu0 = ThreadCpuSeconds();
  const auto t0 = SteadyClock::now();
  frontier::UrlItem item;
  SeenRecord done;
  done.state = SeenRecord::State::kDone;
  done.status = 200;
  bool ok = true;
  for (uint64_t i = 0; i < f.fetched; ++i) {
    item.fp = FetchedFp(f.seed, i);
    done.fetch_time_us = static_cast<int64_t>(i);
    db->MarkDone(item, done);
    if (i % 4 == 0) db->NoteDepth(item.fp, 3);
    StoredFetchRecords r;
    std::string uri = "http://h";
    AppendPadded(&uri, i % f.hosts, 6);
    uri += ".example.com/page-";
    AppendPadded(&uri, i, 1);
    r.digest.emplace(Digest(item.fp), DigestRecord{.uri = uri,
                                                   .date_us = static_cast<int64_t>(i),
                                                   .record_id = "<urn:uuid:" + Digest(i) + ">"});
    PageEntry page;
    page.url = uri;
    page.host = uri.substr(7, uri.find('/', 7) - 7);
    page.status = 200;
    page.fetched_at_us = static_cast<int64_t>(i);
    page.mime = "text/html";
    page.digest = r.digest->first;
    page.warc_file = "harvest-00000.warc.gz";
    page.warc_offset = i * 4096;
    page.warc_length = 4096;
    page.outcome = "fetched";
    r.page = std::move(page);
    if (!db->PutStoredFetch(r).ok()) ok = false;
    if ((i + 1) % kCommitEvery == 0) (void)db->Commit();
  }
  (void)db->Commit();
  (void)db->Sync();
  const double per_page = 1e6 / static_cast<double>(std::max<uint64_t>(f.fetched, 1));
  std::printf("wrote the records of %" PRIu64
              " fetched pages in %.1f s: CPU-us per page %.2f (calling thread %.2f); "
              "DB on disk %.2f GiB (%.0f bytes per URL admitted or fetched); RSS %.0f MiB\n",
              f.fetched, Seconds(t0), (CpuSeconds() - cpu0) * per_page,
              (ThreadCpuSeconds() - tcpu0) * per_page,
              static_cast<double>(DirBytes(f.dir)) / (1u << 30),
              static_cast<double>(DirBytes(f.dir)) / static_cast<double>(f.urls + f.fetched),
              MiB(ProcStatusKb("VmRSS")));
  std::fflush(stdout);
  if (f.fetched == 0 || admitted_fps.empty()) return ok;
  return TimeLookups(f, db, admitted_fps) && ok;
}

namespace {

// One kind of phase 3's lookups: `lookup(r)` makes one, r a random number; true if found.
struct Kind {
  const char* name;
  std::function<bool(uint64_t r)> lookup;
};

std::vector<Kind> LookupKinds(const Flags& f, StateDb* db,
                              const std::vector<uint64_t>& admitted_fps) {
  dedup::SeenBackend* seen = db->seen();
  return {
      {"admitted",
       [&admitted_fps, seen](uint64_t r) {
         return seen->Contains(admitted_fps[r % admitted_fps.size()]);
       }},
      {"absent", [seen](uint64_t r) { return seen->Contains(r); }},
      {"seen record",
       [&f, db](uint64_t r) { return db->GetSeen(FetchedFp(f.seed, r % f.fetched)).has_value(); }},
      {"depth",
       [&f, db](uint64_t r) {
         return db->NotedDepth(FetchedFp(f.seed, r % f.fetched)).has_value();
       }},
      {"digest new", [db](uint64_t r) { return db->FindDigest(Digest(r)).has_value(); }},
      {"digest dup",
       [&f, db](uint64_t r) {
         return db->FindDigest(Digest(FetchedFp(f.seed, r % f.fetched))).has_value();
       }},
  };
}

// The lookups read a settled state: the records just written are flushed and compacted
// first, so that compaction threads do not share the 2 cores with the timed thread and the
// L0 files of a family that was just written to are merged (at most 10 minutes). Settled: no
// flush or compaction running for 2 s in a row (one finishing may start the next). Then, as a
// crawl's commits would at most 10 s later, the cache sized to the settled tables; prints
// the state's shape.
void Settle(StateDb* db) {
  const auto settle0 = SteadyClock::now();
  for (int idle = 0; idle < 20 && Seconds(settle0) < 600;) {
    idle = db->BackgroundWorkPending() ? 0 : idle + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  (void)db->Commit();
  const StateStats st = db->stats();
  std::printf(
      "  the state the lookups read (flushes and compactions settled in %.1f s; block cache "
      "%.0f MiB, table index and filter blocks %.1f MiB):\n",
      Seconds(settle0), static_cast<double>(st.block_cache_bytes) / (1 << 20),
      static_cast<double>(st.table_metadata_bytes) / (1 << 20));
  PrintCompaction(db->EngineStats());
}

// CPU seconds of the calling thread for `n` lookups of kind k; *found counts those found.
double TimeKind(const Kind& k, uint64_t n, uint64_t* rng, uint64_t* found) {
  const double c0 = ThreadCpuSeconds();
  for (uint64_t i = 0; i < n; ++i) *found += k.lookup(SplitMix(rng)) ? 1 : 0;
  return ThreadCpuSeconds() - c0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

bool TimeLookups(const Flags& f, StateDb* db, const std::vector<uint64_t>& admitted_fps) {
  Settle(db);
  const std::vector<Kind> kinds = LookupKinds(f, db, admitted_fps);
  uint64_t rng = f.seed * 7 + 1;
  double total_cpu = 0;
  for (const Kind& k : kinds) {
    const uint64_t read0 = BytesRead();
    const auto w0 = SteadyClock::now();
    uint64_t found = 0;
    const double cpu = TimeKind(k, f.lookups, &rng, &found);
    total_cpu += cpu;
    const double per = 1e6 / static_cast<double>(f.lookups);
    std::printf(
        "  lookup %-11s %6.2f CPU-us, %6.2f us wall, %8.0f bytes read per lookup; "
        "found %.1f%%\n",
        k.name, cpu * per, Seconds(w0) * per,
        static_cast<double>(BytesRead() - read0) / static_cast<double>(f.lookups),
        100.0 * static_cast<double>(found) / static_cast<double>(f.lookups));
  }
  std::printf("lookups: %.2f CPU-us per lookup (mean of the %zu kinds); peak RSS %.0f MiB\n",
              total_cpu * 1e6 / static_cast<double>(f.lookups * kinds.size()), kinds.size(),
              MiB(ProcStatusKb("VmHWM")));
  std::fflush(stdout);
  return db->status().ok();
}

bool CompareLookups(const Flags& a, StateDb* da, const std::vector<uint64_t>& fps_a, const Flags& b,
                    StateDb* db, const std::vector<uint64_t>& fps_b) {
  std::printf("state a: %s\n", a.dir.c_str());
  Settle(da);
  std::printf("state b: %s\n", b.dir.c_str());
  Settle(db);
  const std::vector<Kind> kinds_a = LookupKinds(a, da, fps_a);
  const std::vector<Kind> kinds_b = LookupKinds(b, db, fps_b);
  const uint64_t per_round = std::max<uint64_t>(a.lookups / a.rounds, 1);
  const double per = 1e6 / static_cast<double>(per_round);
  // The same random sequence for both states, each from where its last slice ended.
  uint64_t rng_a = a.seed * 7 + 1, rng_b = rng_a;
  std::vector<std::vector<double>> us_a(kinds_a.size()), us_b(kinds_b.size());
  std::vector<uint64_t> found_a(kinds_a.size()), found_b(kinds_b.size());
  std::vector<double> mean_a, mean_b, ratios;
  std::printf("%" PRIu64 " rounds of %" PRIu64 " lookups of each kind on each state:\n", a.rounds,
              per_round);
  for (uint64_t round = 0; round < a.rounds; ++round) {
    double sum_a = 0, sum_b = 0;
    for (size_t k = 0; k < kinds_a.size(); ++k) {
      auto time_a = [&] {
        us_a[k].push_back(TimeKind(kinds_a[k], per_round, &rng_a, &found_a[k]) * per);
      };
      auto time_b = [&] {
        us_b[k].push_back(TimeKind(kinds_b[k], per_round, &rng_b, &found_b[k]) * per);
      };
      if (round % 2 == 0) {
        time_a();
        time_b();
      } else {
        time_b();
        time_a();
      }
      sum_a += us_a[k].back();
      sum_b += us_b[k].back();
    }
    mean_a.push_back(sum_a / static_cast<double>(kinds_a.size()));
    mean_b.push_back(sum_b / static_cast<double>(kinds_b.size()));
    ratios.push_back(mean_b.back() / mean_a.back());
    std::printf("  round %2" PRIu64
                ": a %6.2f, b %6.2f CPU-us per lookup (mean of the kinds); "
                "b / a %.2f\n",
                round + 1, mean_a.back(), mean_b.back(), ratios.back());
    std::fflush(stdout);
  }
  const double total = static_cast<double>(per_round * a.rounds);
  for (size_t k = 0; k < kinds_a.size(); ++k) {
    std::printf(
        "  lookup %-11s a %6.2f, b %6.2f CPU-us (medians of the rounds), b / a %.2f; "
        "found %.1f%% / %.1f%%\n",
        kinds_a[k].name, Median(us_a[k]), Median(us_b[k]), Median(us_b[k]) / Median(us_a[k]),
        100.0 * static_cast<double>(found_a[k]) / total,
        100.0 * static_cast<double>(found_b[k]) / total);
  }
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  std::printf(
      "compared lookups: a %.2f, b %.2f CPU-us per lookup (medians of the rounds' means); "
      "b / a %.2f (median of the rounds' ratios; %.2f to %.2f); peak RSS %.0f MiB\n",
      Median(mean_a), Median(mean_b), Median(ratios), *lo, *hi, MiB(ProcStatusKb("VmHWM")));
  std::fflush(stdout);
  return da->status().ok() && db->status().ok();
}

}  // namespace harvest::state::scale_bench
