// state_scale_bench, phase 3: the records a crawl writes per fetched page, then the crawl's
// point lookups timed kind by kind (scale_bench.h; docs/benchmarks.md, "State at scale:
// point lookups").
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

bool TimeLookups(const Flags& f, StateDb* db, const std::vector<uint64_t>& admitted_fps) {
  // The lookups read a settled state: the records just written are flushed and compacted
  // first, so that compaction threads do not share the 2 cores with the timed thread and
  // the L0 files of a family that was just written to are merged (at most 10 minutes).
  // Settled: no flush or compaction running for 2 s in a row (one finishing may start the
  // next).
  const auto settle0 = SteadyClock::now();
  for (int idle = 0; idle < 20 && Seconds(settle0) < 600;) {
    idle = db->BackgroundWorkPending() ? 0 : idle + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // As a crawl's commits would, at most 10 s later: the cache sized to the settled tables.
  (void)db->Commit();
  const StateStats st = db->stats();
  std::printf(
      "  the state the lookups read (flushes and compactions settled in %.1f s; block cache "
      "%.0f MiB, table index and filter blocks %.1f MiB):\n",
      Seconds(settle0), static_cast<double>(st.block_cache_bytes) / (1 << 20),
      static_cast<double>(st.table_metadata_bytes) / (1 << 20));
  PrintCompaction(db->EngineStats());

  struct Kind {
    const char* name;
    std::function<bool(uint64_t r)> lookup;  // r: a random number; true if found
  };
  dedup::SeenBackend* seen = db->seen();
  const Kind kinds[] = {
      {"admitted",
       [&](uint64_t r) { return seen->Contains(admitted_fps[r % admitted_fps.size()]); }},
      {"absent", [&](uint64_t r) { return seen->Contains(r); }},
      {"seen record",
       [&](uint64_t r) { return db->GetSeen(FetchedFp(f.seed, r % f.fetched)).has_value(); }},
      {"depth",
       [&](uint64_t r) { return db->NotedDepth(FetchedFp(f.seed, r % f.fetched)).has_value(); }},
      {"digest new", [&](uint64_t r) { return db->FindDigest(Digest(r)).has_value(); }},
      {"digest dup",
       [&](uint64_t r) {
         return db->FindDigest(Digest(FetchedFp(f.seed, r % f.fetched))).has_value();
       }},
  };
  uint64_t rng = f.seed * 7 + 1;
  double total_cpu = 0;
  for (const Kind& k : kinds) {
    const uint64_t read0 = BytesRead();
    const double c0 = ThreadCpuSeconds();
    const auto w0 = SteadyClock::now();
    uint64_t found = 0;
    for (uint64_t i = 0; i < f.lookups; ++i) found += k.lookup(SplitMix(&rng)) ? 1 : 0;
    const double cpu = ThreadCpuSeconds() - c0;
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
              total_cpu * 1e6 / static_cast<double>(f.lookups * std::size(kinds)), std::size(kinds),
              MiB(ProcStatusKb("VmHWM")));
  std::fflush(stdout);
  return db->status().ok();
}

}  // namespace harvest::state::scale_bench
