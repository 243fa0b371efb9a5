// state_scale_bench: the scale benchmark of the durable frontier. Admits N distinct URLs
// over H hosts through the crawl's real admission path (url::ParseCanonical,
// RegistrableDomain, Fingerprint64, frontier::Admission with a RocksDB-backed SeenSet,
// Frontier::Add over the StateDb's RocksQueueStore, Commit every ~1000 admissions), drains
// D of them (Next, Complete, MarkDone), optionally writes the records of F fetched pages and
// times the crawl's point lookups (--fetched F, --lookups L; scale_bench_lookups.cc), then
// closes and reopens the database and times the restart (queue store load + Bloom filter
// rebuild from the seen store). --lookups-only times the point lookups alone, over the
// state a --keep run left.
//
// Goals: 50 M URLs over 1 M hosts admitted at >= 300,000 admissions/s with a peak
// RSS <= 1 GiB. Exit status: 0 when every distinct URL was accepted, no drained URL came out
// twice and no database error occurred; 1 otherwise; 2 on bad flags.
// Usage and figures: docs/benchmarks.md ("Durable frontier at scale", "State at scale: point
// lookups"), scripts/bench-frontier.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/hash.h"
#include "base/mutex.h"
#include "dedup/dedup.h"
#include "frontier/admission.h"
#include "frontier/frontier.h"
#include "state/scale_bench.h"
#include "state/state.h"
#include "url/url.h"

namespace harvest::state::scale_bench {

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Appends v in decimal, zero-padded to at least `width` digits.
void AppendPadded(std::string* out, uint64_t v, int width) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n < width) buf[n++] = '0';
  while (n > 0) out->push_back(buf[--n]);
}

// kB from /proc/self/status ("VmRSS", "VmHWM").
uint64_t ProcStatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':') {
      return std::strtoull(line.c_str() + len + 1, nullptr, 10);
    }
  }
  return 0;
}

double MiB(uint64_t kb) { return static_cast<double>(kb) / 1024.0; }

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

uint64_t DirBytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// From RocksDB's statistics: the compaction totals ("Sum" row) of each column family.
void PrintCompaction(const std::string& stats) {
  std::string cf;
  std::string levels;  // the current family's "L0 3/0, L4 20/1"
  size_t pos = 0;
  while (pos < stats.size()) {
    size_t end = stats.find('\n', pos);
    if (end == std::string::npos) end = stats.size();
    const std::string_view line(stats.data() + pos, end - pos);
    pos = end + 1;
    if (line.rfind("** Compaction Stats [", 0) == 0) {
      cf = std::string(line.substr(21, line.find(']') - 21));
      levels.clear();
    } else if (!cf.empty() && line.size() > 4 && line.substr(0, 3) == "  L" && line[3] >= '0' &&
               line[3] <= '9') {
      // A level row: "  L3     12/0  ...": the level and its files (/being compacted).
      const size_t files = line.find_first_not_of(' ', 4);
      const size_t files_end = line.find(' ', files);
      if (files != std::string_view::npos) {
        levels += std::string(levels.empty() ? "" : ", ") + std::string(line.substr(2, 2)) + " " +
                  std::string(line.substr(files, files_end - files));
      }
    } else if (!cf.empty() && line.rfind(" Sum ", 0) == 0) {
      // Columns: Level Files Size Score Read(GB) Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) ...
      std::vector<std::string_view> cols;
      size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ') ++j;
        if (j > i) cols.push_back(line.substr(i, j - i));
        i = j;
      }
      if (cols.size() > 15) {
        // ... W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) ...: flushes included.
        std::printf(
            "  compaction [%s]: size %.*s %.*s, read %.*s GB, written %.*s GB, "
            "W-Amp %.*s, CPU %.*s s\n",
            cf.c_str(), static_cast<int>(cols[2].size()), cols[2].data(),
            static_cast<int>(cols[3].size()), cols[3].data(), static_cast<int>(cols[5].size()),
            cols[5].data(), static_cast<int>(cols[8].size()), cols[8].data(),
            static_cast<int>(cols[11].size()), cols[11].data(), static_cast<int>(cols[15].size()),
            cols[15].data());
        if (!levels.empty()) std::printf("    files per level: %s\n", levels.c_str());
      }
      cf.clear();
    }
  }
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

namespace {

// The writer thread fsyncs the WAL about once per flush interval; the benchmark does it
// inline at this period so the cost is counted.
constexpr auto kSyncInterval = std::chrono::seconds(1);
constexpr uint64_t kProgressEvery = 5'000'000;
// Links found on one page mostly point to the page's own host: a burst of 1..kMaxBurst
// consecutive URLs of one host.
constexpr uint64_t kMaxBurst = 16;

void Usage() {
  std::fprintf(
      stderr,
      "usage: state_scale_bench [--urls N (50000000)] [--hosts H (1000000)]\n"
      "         [--drain D (1000000)] [--dir DIR (/tmp/harvest-scale-<pid>)]\n"
      "         [--no-restart] [--keep] [--lookups-only] [--seed S] [--queue-ram-items N]\n"
      "         [--compare-dir DIR2 --compare-urls N2 --compare-fetched F2 [--rounds R (10)]]\n"
      "         [--merge-level0 (with --lookups-only)]\n"
      "         [--write-buffer-mb M (32)] [--block-cache-mb M (64)] "
      "[--block-cache-max-mb M (512)]\n"
      "         [--fetched F (0)] [--lookups L (1000000)] [--host-cache N (20000)]\n"
      "         [--ingest-every N (500000 admitted fingerprints per table file)]\n"
      "         [--small (200000 URLs, 20000 hosts, drain 20000)]\n");
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto number = [&](uint64_t* out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      *out = std::strtoull(argv[++i], &end, 10);
      return end != nullptr && *end == '\0';
    };
    uint64_t n = 0;
    if (a == "--urls") {
      if (!number(&f->urls)) return false;
    } else if (a == "--hosts") {
      if (!number(&f->hosts)) return false;
    } else if (a == "--drain") {
      if (!number(&f->drain)) return false;
    } else if (a == "--seed") {
      if (!number(&f->seed)) return false;
    } else if (a == "--queue-ram-items") {
      if (!number(&n)) return false;
      f->queue_ram_items = n;
    } else if (a == "--write-buffer-mb") {
      if (!number(&n) || n == 0) return false;
      f->write_buffer_mb = n;
    } else if (a == "--block-cache-mb") {
      if (!number(&n) || n == 0) return false;
      f->block_cache_mb = n;
    } else if (a == "--block-cache-max-mb") {
      if (!number(&n) || n == 0) return false;
      f->block_cache_max_mb = n;
    } else if (a == "--ingest-every") {
      if (!number(&n) || n == 0) return false;
      f->ingest_every = n;
    } else if (a == "--host-cache") {
      if (!number(&n)) return false;
      f->host_cache = n;
    } else if (a == "--fetched") {
      if (!number(&f->fetched)) return false;
    } else if (a == "--lookups") {
      if (!number(&f->lookups) || f->lookups == 0) return false;
    } else if (a == "--dir" && i + 1 < argc) {
      f->dir = argv[++i];
    } else if (a == "--no-restart") {
      f->restart = false;
    } else if (a == "--keep") {
      f->keep = true;
    } else if (a == "--lookups-only") {
      f->lookups_only = true;
    } else if (a == "--compare-dir" && i + 1 < argc) {
      f->compare_dir = argv[++i];
    } else if (a == "--compare-urls") {
      if (!number(&f->compare_urls) || f->compare_urls == 0) return false;
    } else if (a == "--compare-fetched") {
      if (!number(&f->compare_fetched) || f->compare_fetched == 0) return false;
    } else if (a == "--merge-level0") {
      f->merge_level0 = true;
    } else if (a == "--rounds") {
      if (!number(&f->rounds) || f->rounds == 0) return false;
    } else if (a == "--small") {
      f->urls = 200'000;
      f->hosts = 20'000;
      f->drain = 20'000;
    } else {
      return false;
    }
  }
  if (f->merge_level0 && !f->lookups_only) return false;
  if (!f->compare_dir.empty() &&
      (!f->lookups_only || f->compare_urls == 0 || f->compare_fetched == 0)) {
    return false;  // a second state is compared only by --lookups-only, and needs its shape
  }
  return f->hosts > 0 && f->urls >= f->hosts && f->drain <= f->urls;
}

void AppendHex8(std::string* out, uint32_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = 28; shift >= 0; shift -= 4) out->push_back(kHex[(v >> shift) & 0xf]);
}

// Deterministic synthetic link stream: bursts of links of one host; new hosts are
// discovered progressively (exactly H hosts by the end); URL k of host h is
// http://h<h>.example<h%100>.com/section-<k%40>/page-<k>.html?id=<hash>, so every URL is
// distinct. Lengths 58-70 characters.
class UrlStream {
 public:
  UrlStream(uint64_t urls, uint64_t hosts, uint64_t seed)
      : urls_(urls), hosts_(hosts), rng_(seed), next_page_(hosts, 0) {}

  // Writes the next URL and its linking page (via) and returns false when done.
  bool Next(std::string* url, std::string* via, int* depth) {
    if (emitted_ == urls_) return false;
    if (burst_left_ == 0) StartBurst();
    --burst_left_;
    ++emitted_;
    const uint32_t k = next_page_[host_]++;
    // Formatted by hand: snprintf cost half a microsecond per URL, a sixth of the budget.
    std::string& u = *url;
    u.assign("http://h");
    AppendPadded(&u, host_, 6);
    u.append(".example");
    AppendPadded(&u, host_ % 100, 2);
    u.append(".com/section-");
    const size_t host_end = u.size() - std::strlen("/section-");
    AppendPadded(&u, k % 40, 1);
    u.append("/page-");
    AppendPadded(&u, k, 1);
    u.append(".html?id=");
    AppendHex8(&u, static_cast<uint32_t>(Mix64(host_ << 32 | k)));
    via->assign(u, 0, host_end);
    via->append("/section-");
    AppendPadded(via, via_page_ % 40, 1);
    via->push_back('/');
    *depth = depth_;
    return true;
  }
  uint64_t hosts_seen() const { return hosts_seen_; }
  size_t memory_bytes() const { return next_page_.capacity() * sizeof(uint32_t); }

 private:
  void StartBurst() {
    const uint64_t left_urls = urls_ - emitted_;  // >= left_hosts (invariant)
    const uint64_t left_hosts = hosts_ - hosts_seen_;
    // A new host with the probability that spreads the remaining new hosts evenly over the
    // remaining bursts (kAverageBurst URLs each); forced when every URL left must be new.
    constexpr uint64_t kAverageBurstTimes2 = kMaxBurst + 1;
    const bool fresh =
        left_hosts > 0 && (hosts_seen_ == 0 || left_urls == left_hosts ||
                           SplitMix(&rng_) % (2 * left_urls) < left_hosts * kAverageBurstTimes2);
    host_ = fresh ? hosts_seen_++ : SplitMix(&rng_) % hosts_seen_;
    burst_left_ = 1 + SplitMix(&rng_) % kMaxBurst;
    // Leave one URL for each host not yet discovered.
    burst_left_ = std::min(burst_left_, left_urls - left_hosts + (fresh ? 1 : 0));
    via_page_ = next_page_[host_];
    depth_ = 1 + static_cast<int>(SplitMix(&rng_) % 5);
  }

  uint64_t urls_, hosts_, rng_;
  std::vector<uint32_t> next_page_;
  uint64_t emitted_ = 0, hosts_seen_ = 0, host_ = 0, burst_left_ = 0;
  uint32_t via_page_ = 0;
  int depth_ = 1;
};

StateOptions DbOptions(const Flags& f) {
  StateOptions o;
  o.dir = f.dir;
  o.queue_ram_items = f.queue_ram_items;
  o.write_buffer_bytes = f.write_buffer_mb << 20;
  o.block_cache_bytes = f.block_cache_mb << 20;
  o.block_cache_max_bytes = f.block_cache_max_mb << 20;
  o.ingest_every = f.ingest_every;
  return o;
}

struct Counters {
  uint64_t refused = 0;     // distinct URLs not accepted (must stay 0)
  uint64_t unparsable = 0;  // generated URLs the parser rejected (must stay 0)
  uint64_t duplicates = 0;  // drained URLs that came out twice (must stay 0)
  uint64_t drained = 0;
};

// Parsed links as the crawl's page processors hand them to the I/O thread: serialized into
// one buffer (in the crawl they cross a process boundary), read back as views.
struct LinkBatch {
  enum Field { kUrl, kHost, kPath, kQuery, kRegistrable, kVia, kFields };
  struct Link {
    uint32_t off[kFields];
    uint32_t len[kFields];
    uint64_t fp = 0;
    int depth = 0;
  };
  std::string bytes;
  std::vector<Link> links;

  void Set(Link* l, Field f, std::string_view v) {
    l->off[f] = static_cast<uint32_t>(bytes.size());
    l->len[f] = static_cast<uint32_t>(v.size());
    bytes.append(v);
  }
  std::string_view Get(const Link& l, Field f) const {
    return std::string_view(bytes).substr(l.off[f], l.len[f]);
  }
  size_t size() const { return links.size(); }
};

// Batches of links from the producer thread to the I/O thread; at most kMaxBatches wait.
class LinkPipe {
 public:
  static constexpr size_t kBatch = 1024;
  static constexpr size_t kMaxBatches = 8;
  void Put(LinkBatch batch) {
    MutexLock lock(&mu_);
    while (ready_.size() >= kMaxBatches) not_full_.Wait(&mu_);
    ready_.push_back(std::move(batch));
    not_empty_.Signal();
  }
  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
    not_empty_.Signal();
  }
  // False when closed and empty.
  bool Take(LinkBatch* batch) {
    MutexLock lock(&mu_);
    while (ready_.empty() && !closed_) not_empty_.Wait(&mu_);
    if (ready_.empty()) return false;
    *batch = std::move(ready_.front());
    ready_.pop_front();
    not_full_.Signal();
    return true;
  }

 private:
  Mutex mu_;
  CondVar not_empty_, not_full_;
  std::deque<LinkBatch> ready_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

struct ProducerResult {
  uint64_t unparsable = 0;
  uint64_t hosts_seen = 0;
  size_t generator_bytes = 0;
  double cpu_s = 0;                 // the producer thread's CPU time
  double gen_ns = 0, parse_ns = 0;  // sampled
  uint64_t samples = 0;
};

// The page processors' share (in the crawl they are other processes): generate each link,
// parse and canonicalize it, find its registrable domain and fingerprint.
void Produce(const Flags& f, LinkPipe* pipe, ProducerResult* out) {
  const double cpu0 = ThreadCpuSeconds();
  UrlStream stream(f.urls, f.hosts, f.seed);
  const url::CanonOptions& canon = url::DefaultCanonOptions();
  std::string href, via;
  int depth = 0;
  LinkBatch batch;
  batch.links.reserve(LinkPipe::kBatch);
  constexpr uint64_t kSampleEvery = 16;
  uint64_t n = 0;
  auto ns_since = [](SteadyClock::time_point t) {
    return std::chrono::duration<double, std::nano>(SteadyClock::now() - t).count();
  };
  for (;; ++n) {
    const bool sample = n % kSampleEvery == 0;
    SteadyClock::time_point ts;
    if (sample) ts = SteadyClock::now();
    if (!stream.Next(&href, &via, &depth)) break;
    if (sample) {
      out->gen_ns += ns_since(ts);
      ts = SteadyClock::now();
    }
    std::optional<url::Url> u = url::ParseCanonical(href, nullptr, canon);
    if (!u) {
      ++out->unparsable;
      continue;
    }
    LinkBatch::Link& l = batch.links.emplace_back();
    batch.Set(&l, LinkBatch::kUrl, u->href());
    batch.Set(&l, LinkBatch::kHost, u->host());
    batch.Set(&l, LinkBatch::kPath, u->path());
    batch.Set(&l, LinkBatch::kQuery, u->query());
    batch.Set(&l, LinkBatch::kRegistrable, url::RegistrableDomain(u->host()));
    batch.Set(&l, LinkBatch::kVia, via);
    l.fp = url::Fingerprint64(u->href());
    l.depth = depth;
    if (sample) {
      out->parse_ns += ns_since(ts);
      ++out->samples;
    }
    if (batch.size() == LinkPipe::kBatch) {
      pipe->Put(std::move(batch));
      batch = {};
      batch.links.reserve(LinkPipe::kBatch);
    }
  }
  if (batch.size() > 0) pipe->Put(std::move(batch));
  pipe->Close();
  out->hosts_seen = stream.hosts_seen();
  out->generator_bytes = stream.memory_bytes();
  out->cpu_s = ThreadCpuSeconds() - cpu0;
}

// The crawl's bound on the hosts in RAM (crawl::Admitter::AddOrPark, ActivateParked and
// Crawler::EvictHosts; docs/architecture.md §1.5): a URL of a host not resident waits in
// the `parked` column family while the cache is full (or anything is parked); a host whose
// work is done leaves the frontier; parked hosts come in by batches of a sixteenth of the
// cache. Admission's per-host counters are bounded the same way (SetCounterStore). The
// crawl keeps idle hosts until the cache is full; here they leave at once (nothing would
// bring them back). cap 0: every host stays resident, nothing is parked.
class HostCache {
 public:
  HostCache(size_t cap, StateDb* db, frontier::Frontier* frontier, frontier::Admission* admission)
      : cap_(cap), db_(db), frontier_(frontier), counters_(db, /*resumed=*/false) {
    if (cap_ > 0) admission->SetCounterStore(&counters_, cap_);
  }

  void AddOrPark(frontier::UrlItem item) {
    if (cap_ > 0 && !frontier_->KnowsHost(item.host) &&
        (frontier_->hosts_resident() >= cap_ || db_->parked() > 0)) {
      db_->Park(item);
      return;
    }
    frontier_->Add(std::move(item));
  }
  // After a lease of `host` completed: a host without work leaves RAM.
  void Completed(const std::string& host) {
    if (cap_ > 0 && frontier_->HostIdle(host)) (void)frontier_->Forget(host);
  }
  // Parked hosts come in while there is room: by batches of a sixteenth of the cache, or
  // any room when nothing else is queued.
  void Activate(int classes) {
    if (cap_ == 0 || db_->parked() == 0) return;
    const size_t resident = frontier_->hosts_resident();
    const size_t room = resident < cap_ ? cap_ - resident : 0;
    if (room == 0 || (room < std::max<size_t>(cap_ / 16, 1) && frontier_->queued() > 0)) return;
    unparked_ += db_->TakeParked(
        room, classes, [this](frontier::UrlItem item) { frontier_->Add(std::move(item)); });
  }
  uint64_t unparked() const { return unparked_; }

 private:
  size_t cap_;
  StateDb* db_;
  frontier::Frontier* frontier_;
  HostCounterStore counters_;
  uint64_t unparked_ = 0;
};

constexpr uint64_t kMaxSample = 1u << 20;

// Phase 1: admission. The I/O thread's share — Admission::Admit (Bloom filter, exact seen
// store on a Bloom hit, trap guards), Frontier::Add (queue store), StateDb::Commit every
// kCommitEvery admissions and Sync every kSyncInterval — takes links from a producer thread
// doing the page processors' share. Returns false on a database error.
// `admitted_fps` (when not null) gets about kMaxSample of the admitted fingerprints, for phase 3.
bool Admit(const Flags& f, StateDb* db, dedup::SeenSet* seen, frontier::Admission* admission,
           frontier::Frontier* frontier, HostCache* cache, Counters* c,
           std::vector<uint64_t>* admitted_fps) {
  const double cpu0 = CpuSeconds();
  const auto t0 = SteadyClock::now();
  LinkPipe pipe;
  ProducerResult produced;
  std::thread producer(Produce, std::cref(f), &pipe, &produced);
  const double io_cpu0 = ThreadCpuSeconds();
  auto last_sync = t0;
  uint64_t n = 0;
  const uint64_t sample_every = std::max<uint64_t>(f.urls / kMaxSample, 1);
  // Where the time goes: phases timed on every kSampleEvery-th admission (timers cost ~25 ns
  // each), commits always. Wall time of the I/O thread, in ns.
  constexpr uint64_t kSampleEvery = 16;
  double t_admit = 0, t_add = 0, t_commit = 0, t_wait = 0;
  uint64_t samples = 0;
  auto ns_since = [](SteadyClock::time_point t) {
    return std::chrono::duration<double, std::nano>(SteadyClock::now() - t).count();
  };
  LinkBatch batch;
  for (;;) {
    const auto tw = SteadyClock::now();
    if (!pipe.Take(&batch)) break;
    t_wait += ns_since(tw);
    for (const LinkBatch::Link& l : batch.links) {
      const bool sample = n % kSampleEvery == 0;
      SteadyClock::time_point ts;
      if (sample) ts = SteadyClock::now();
      frontier::AdmitCandidate cand;
      cand.canonical_url = batch.Get(l, LinkBatch::kUrl);
      cand.host = batch.Get(l, LinkBatch::kHost);
      cand.path = batch.Get(l, LinkBatch::kPath);
      cand.query = batch.Get(l, LinkBatch::kQuery);
      cand.registrable_domain = batch.Get(l, LinkBatch::kRegistrable);
      cand.fp = l.fp;
      cand.depth = l.depth;
      const frontier::AdmitVerdict verdict = admission->Admit(cand);
      if (sample) {
        t_admit += ns_since(ts);
        ts = SteadyClock::now();
      }
      if (verdict != frontier::AdmitVerdict::kAccept) {
        ++c->refused;
      } else {
        frontier::UrlItem item;
        item.url = cand.canonical_url;
        // The host key is the origin, as in the crawl (canonical URLs carry no userinfo).
        item.host = std::string(cand.canonical_url.substr(
            0, cand.canonical_url.find('/', cand.canonical_url.find("://") + 3)));
        item.fp = l.fp;
        item.depth = l.depth;
        item.priority = frontier::PriorityFor(frontier::PriorityInputs{.depth = l.depth},
                                              frontier::FrontierOptions{}.priority_classes);
        item.via = batch.Get(l, LinkBatch::kVia);
        cache->AddOrPark(std::move(item));
        if (admitted_fps != nullptr && n % sample_every == 0) admitted_fps->push_back(l.fp);
      }
      if (sample) {
        t_add += ns_since(ts);
        ++samples;
      }
      if (++n % kCommitEvery == 0) {
        const auto tc = SteadyClock::now();
        admission->TrimResident();  // as the crawl, right before its state commit
        (void)db->Commit();
        t_commit += ns_since(tc);
        if (SteadyClock::now() - last_sync >= kSyncInterval) {
          (void)db->Sync();
          last_sync = SteadyClock::now();
        }
      }
      if (n % kProgressEvery == 0) {
        std::printf("  %6.1f M admitted  %8.0f admissions/s  RSS %6.0f MiB\n",
                    static_cast<double>(n) / 1e6, static_cast<double>(n) / Seconds(t0),
                    MiB(ProcStatusKb("VmRSS")));
        std::fflush(stdout);
      }
    }
  }
  admission->TrimResident();
  (void)db->Commit();
  (void)db->Sync();
  const double io_cpu = ThreadCpuSeconds() - io_cpu0;
  producer.join();
  c->unparsable = produced.unparsable;
  const double wall = Seconds(t0), cpu = CpuSeconds() - cpu0;
  const StateStats st = db->stats();
  const double per_url = 1e6 / static_cast<double>(std::max<uint64_t>(n, 1));
  std::printf("admitted %" PRIu64 " URLs over %" PRIu64
              " hosts in %.1f s: %.0f admissions/s wall, "
              "%.0f admissions/s CPU (%.2f CPU-us each)\n",
              frontier->queued() + db->parked(), produced.hosts_seen, wall,
              static_cast<double>(n) / wall, static_cast<double>(n) / cpu, cpu * per_url);
  std::printf(
      "  hosts in RAM: frontier %zu, admission counters %zu (host cache %zu); URLs "
      "queued %zu, parked %" PRIu64
      "; admissions counted blind (host's counters not read) "
      "%.1f%%\n",
      frontier->hosts_resident(), admission->hosts_resident(), f.host_cache, frontier->queued(),
      db->parked(),
      100.0 * static_cast<double>(admission->admitted_blind()) /
          static_cast<double>(std::max<uint64_t>(n, 1)));
  std::printf(
      "  CPU-us per admission: I/O thread %.2f, producer thread %.2f, RocksDB "
      "background threads and the rest %.2f\n",
      io_cpu * per_url, produced.cpu_s * per_url, (cpu - io_cpu - produced.cpu_s) * per_url);
  if (samples > 0 && produced.samples > 0 && n > 0) {
    const double per = 1e-3 / static_cast<double>(samples);
    const double pper = 1e-3 / static_cast<double>(produced.samples);
    std::printf(
        "  producer wall us per URL: generate %.2f, parse+canonicalize+registrable "
        "domain+fingerprint %.2f\n",
        produced.gen_ns * pper, produced.parse_ns * pper);
    std::printf(
        "  I/O thread wall us per admission: Admission::Admit %.2f, Frontier::Add "
        "%.2f, Commit %.2f, waiting for links %.2f\n",
        t_admit * per, t_add * per, t_commit * 1e-3 / static_cast<double>(n),
        t_wait * 1e-3 / static_cast<double>(n));
  }
  std::printf(
      "  refused %" PRIu64 ", unparsable %" PRIu64 ", Bloom %.1f MiB (%" PRIu64
      " false positives caught), queued in RAM %" PRIu64 ", admitted-set runs written %" PRIu64
      " (%" PRIu64 " now; merges wrote %.2f fingerprints per URL), generator %.1f MiB\n",
      c->refused, c->unparsable, static_cast<double>(seen->memory_bytes()) / (1 << 20),
      seen->false_positives(), st.queued_in_ram, st.ingests, st.admitted_runs,
      static_cast<double>(st.admitted_merged) / static_cast<double>(std::max<uint64_t>(n, 1)),
      static_cast<double>(produced.generator_bytes) / (1 << 20));
  std::printf(
      "  peak RSS %.0f MiB, RSS now %.0f MiB, DB on disk %.2f GiB, block cache %.0f MiB (table "
      "index and filter blocks %.1f MiB)\n",
      MiB(ProcStatusKb("VmHWM")), MiB(ProcStatusKb("VmRSS")),
      static_cast<double>(DirBytes(f.dir)) / (1u << 30),
      static_cast<double>(st.block_cache_bytes) / (1 << 20),
      static_cast<double>(st.table_metadata_bytes) / (1 << 20));
  PrintCompaction(db->EngineStats());
  std::fflush(stdout);
  return db->status().ok();
}

// Phase 2: drain D URLs with delay 0 on a fake clock; parked hosts come in as resident ones
// run out of work (HostCache).
bool Drain(const Flags& f, StateDb* db, frontier::Admission* admission,
           frontier::Frontier* frontier, HostCache* cache, FakeClock* clock, Counters* c) {
  dedup::FingerprintSet drained(f.drain);
  const double cpu0 = CpuSeconds();
  const auto t0 = SteadyClock::now();
  const int classes = frontier::FrontierOptions{}.priority_classes;
  while (c->drained < f.drain) {
    std::optional<frontier::Lease> lease = frontier->Next();
    if (!lease) {
      if (db->parked() > 0) {
        (void)db->Commit();
        cache->Activate(classes);
        continue;
      }
      std::printf("  frontier empty after %" PRIu64 " drains\n", c->drained);
      break;
    }
    if (!drained.Insert(lease->item.fp)) ++c->duplicates;
    const std::string_view origin = lease->item.host;
    admission->NoteFetched(origin.substr(origin.find("://") + 3));  // no ports in this bench
    (void)frontier->Complete(*lease, {});
    SeenRecord done;
    done.state = SeenRecord::State::kDone;
    done.status = 200;
    done.fetch_time_us = clock->WallMicros();
    db->MarkDone(lease->item, done);
    cache->Completed(lease->item.host);
    if (++c->drained % kCommitEvery == 0) {
      admission->TrimResident();
      (void)db->Commit();
      cache->Activate(classes);  // the crawl's loop: commit, then bring parked hosts in
    }
  }
  admission->TrimResident();
  (void)db->Commit();
  (void)db->Sync();
  const double wall = Seconds(t0), cpu = CpuSeconds() - cpu0;
  std::printf("drained %" PRIu64
              " URLs in %.1f s: %.0f drains/s wall, %.0f drains/s CPU; "
              "duplicates %" PRIu64 "; URLs unparked %" PRIu64
              ", hosts in RAM %zu; peak RSS %.0f MiB\n",
              c->drained, wall, static_cast<double>(c->drained) / wall,
              static_cast<double>(c->drained) / cpu, c->duplicates, cache->unparked(),
              frontier->hosts_resident(), MiB(ProcStatusKb("VmHWM")));
  std::fflush(stdout);
  return db->status().ok();
}

// Opens the state in f.dir; null after printing why it could not.
std::unique_ptr<StateDb> OpenOrReport(const Flags& f) {
  auto opened = StateDb::Open(DbOptions(f));
  if (!opened.ok()) {
    std::fprintf(stderr, "state_scale_bench: %s\n", opened.status().ToString().c_str());
    return nullptr;
  }
  return std::move(opened).value();
}

// The state a `--keep --fetched F` run left in f.dir (same --urls, --fetched and --seed),
// opened, with a sample of its admitted fingerprints read back into *admitted_fps; null after
// printing why not.
std::unique_ptr<StateDb> OpenKept(const Flags& f, std::vector<uint64_t>* admitted_fps) {
  if (f.fetched == 0) {
    std::fprintf(stderr, "--lookups-only needs the --fetched F of the run that left the state\n");
    return nullptr;
  }
  if (!fs::exists(fs::path(f.dir) / "CURRENT")) {
    std::fprintf(stderr, "--lookups-only: no state in %s (a --keep run leaves one)\n",
                 f.dir.c_str());
    return nullptr;
  }
  std::unique_ptr<StateDb> db = OpenOrReport(f);
  if (db == nullptr) return nullptr;
  if (f.merge_level0) {
    const auto m0 = SteadyClock::now();
    if (Status s = db->MergeLevel0(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return nullptr;
    }
    std::printf("merged the level-0 tables of %s into the levels below in %.1f s\n", f.dir.c_str(),
                Seconds(m0));
  }
  uint64_t n = 0;
  const uint64_t sample_every = std::max<uint64_t>(f.urls / kMaxSample, 1);
  const auto t0 = SteadyClock::now();
  // Phase 3's fetched pages are in the seen family but were never admitted.
  std::vector<uint64_t> fetched(f.fetched);
  for (uint64_t i = 0; i < f.fetched; ++i) fetched[i] = FetchedFp(f.seed, i);
  std::sort(fetched.begin(), fetched.end());
  Status s = db->ForEachSeen([&](uint64_t fp) {
    if (std::binary_search(fetched.begin(), fetched.end(), fp)) return;
    if (n++ % sample_every == 0) admitted_fps->push_back(fp);
  });
  if (!s.ok() || admitted_fps->empty()) {
    std::fprintf(stderr, "no admitted fingerprints in %s: %s\n", f.dir.c_str(),
                 s.ToString().c_str());
    return nullptr;
  }
  std::printf("state_scale_bench --lookups-only: %s, %" PRIu64
              " fingerprints admitted (read in %.1f s), %" PRIu64 " fetched\n",
              f.dir.c_str(), n, Seconds(t0), f.fetched);
  return db;
}

// --lookups-only: phase 3's timed lookups over the state a `--keep --fetched F` run left in
// --dir, for measuring read options without writing the state again; with --compare-dir,
// over that state and a second one, alternating (CompareLookups). Nothing is written but
// what opening a state does (its write-ahead log flushed to a table file, compactions that
// follow), so the records and the admitted set stay those of the run that left them.
bool LookupsOnly(const Flags& f) {
  std::vector<uint64_t> fps_a;
  std::unique_ptr<StateDb> da = OpenKept(f, &fps_a);
  if (da == nullptr) return false;
  if (f.compare_dir.empty()) return TimeLookups(f, da.get(), fps_a);
  Flags g = f;
  g.dir = f.compare_dir;
  g.urls = f.compare_urls;
  g.fetched = f.compare_fetched;
  std::vector<uint64_t> fps_b;
  std::unique_ptr<StateDb> db = OpenKept(g, &fps_b);
  if (db == nullptr) return false;
  return CompareLookups(f, da.get(), fps_a, g, db.get(), fps_b);
}

// Phase 4: reopen and time what a restart does before crawling.
bool Restart(const Flags& f, uint64_t expected_queued, uint64_t expected_parked) {
  const auto t0 = SteadyClock::now();
  std::unique_ptr<StateDb> db = OpenOrReport(f);
  if (db == nullptr) return false;
  const double open_s = Seconds(t0);
  FakeClock clock;
  frontier::FrontierOptions fo;
  fo.default_delay = std::chrono::milliseconds(0);
  const auto t1 = SteadyClock::now();
  frontier::Frontier frontier(fo, &clock, db->NewQueueStore(fo.priority_classes));
  db->ForEachLoadedHost([&](const std::string& host, size_t) { frontier.AdoptStoredHost(host); });
  const double load_s = Seconds(t1);
  dedup::SeenSet seen(dedup::SeenSetOptions{.expected_urls = f.urls}, db->seen());
  const auto t2 = SteadyClock::now();
  uint64_t fps = 0;
  Status s = db->ForEachSeen([&](uint64_t fp) {
    seen.Preload(fp);
    ++fps;
  });
  const double bloom_s = Seconds(t2);
  std::printf("restart: open %.2f s; queue store load + adopt %" PRIu64 " hosts, %zu URLs (%" PRIu64
              " parked): %.1f s; "
              "Bloom rebuild from %" PRIu64
              " seen fingerprints: %.1f s (%.2f s per 10 M); "
              "peak RSS %.0f MiB\n",
              open_s, db->stats().hosts, frontier.queued(), db->parked(), load_s, fps, bloom_s,
              fps > 0 ? bloom_s * 1e7 / static_cast<double>(fps) : 0.0, MiB(ProcStatusKb("VmHWM")));
  bool ok = s.ok() && db->status().ok();
  if (frontier.queued() != expected_queued || db->parked() != expected_parked ||
      fps != f.urls + f.fetched) {
    std::printf("restart MISMATCH: expected %" PRIu64 " queued, %" PRIu64 " parked and %" PRIu64
                " seen; found %zu, %" PRIu64 " and %" PRIu64 "\n",
                expected_queued, expected_parked, f.urls + f.fetched, frontier.queued(),
                db->parked(), fps);
    ok = false;
  }
  return ok;
}

int Run(const Flags& f) {
  std::error_code ec;
  if (fs::exists(f.dir, ec) && !fs::is_empty(f.dir, ec) &&
      !fs::exists(fs::path(f.dir) / "CURRENT")) {
    std::fprintf(stderr, "%s exists and is not a state directory; refusing to delete it\n",
                 f.dir.c_str());
    return 2;
  }
  if (f.lookups_only) return LookupsOnly(f) ? 0 : 1;
  fs::remove_all(f.dir, ec);
  std::printf("state_scale_bench: %" PRIu64 " URLs over %" PRIu64 " hosts, drain %" PRIu64
              ", dir %s\n  traps: host_daily_quota and max_discovery_ratio unlimited (the "
              "synthetic load would trip them); delay 0; commit every %" PRIu64
              " admissions, WAL sync every 1 s\n",
              f.urls, f.hosts, f.drain, f.dir.c_str(), kCommitEvery);
  std::unique_ptr<StateDb> db = OpenOrReport(f);
  if (db == nullptr) return 1;
  Counters c;
  bool ok = true;
  uint64_t left = 0, left_parked = 0;
  {
    FakeClock clock;
    dedup::SeenSet seen(dedup::SeenSetOptions{.expected_urls = f.urls}, db->seen());
    frontier::TrapOptions traps;
    traps.host_daily_quota = UINT64_MAX;
    traps.max_discovery_ratio = 1e18;
    frontier::Admission admission({}, traps, &seen, nullptr);
    frontier::FrontierOptions fo;
    fo.default_delay = std::chrono::milliseconds(0);
    frontier::Frontier frontier(fo, &clock, db->NewQueueStore(fo.priority_classes));
    HostCache cache(f.host_cache, db.get(), &frontier, &admission);
    std::vector<uint64_t> admitted_fps;
    ok = Admit(f, db.get(), &seen, &admission, &frontier, &cache, &c,
               f.fetched > 0 ? &admitted_fps : nullptr) &&
         ok;
    ok = Drain(f, db.get(), &admission, &frontier, &cache, &clock, &c) && ok;
    if (f.fetched > 0) ok = FetchedAndLookups(f, db.get(), admitted_fps) && ok;
    left = frontier.queued();
    left_parked = db->parked();
  }
  db.reset();  // closed before Restart opens it again
  if (f.restart) ok = Restart(f, left, left_parked) && ok;
  ok = ok && c.refused == 0 && c.unparsable == 0 && c.duplicates == 0 && c.drained == f.drain;
  std::printf("%s (peak RSS %.0f MiB)\n", ok ? "PASS" : "FAIL", MiB(ProcStatusKb("VmHWM")));
  if (!f.keep) fs::remove_all(f.dir, ec);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace harvest::state::scale_bench

int main(int argc, char** argv) {
  harvest::state::scale_bench::Flags flags;
  if (!harvest::state::scale_bench::ParseFlags(argc, argv, &flags)) {
    harvest::state::scale_bench::Usage();
    return 2;
  }
  if (flags.dir.empty()) {
    flags.dir = "/tmp/harvest-scale-" + std::to_string(getpid());
  }
  return harvest::state::scale_bench::Run(flags);
}
