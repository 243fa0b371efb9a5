// state: a crawl's durable state in RocksDB (docs/architecture.md §1.3, §1.5, §5) — one database
// per crawl directory (<out>/state), with column families
//
//   queues   host queues: (epoch, host id, priority class, sequence) -> URL item. Every
//            admitted URL not yet done has an entry; an entry is deleted only when the URL
//            is done (its WARC records durable, or a final outcome recorded), so a URL that
//            was leased, in flight or waiting for a retry when the process died is served
//            again.
//   admitted empty: the admitted set of databases written before it moved to admitted-runs
//            (below); emptied into that at open.
//   seen     URL fingerprint -> seen record of a done URL (status, fetch time, ETag,
//            Last-Modified, next due).
//   hosts    per host: id, politeness (next-allowed time, Crawl-delay, dead reason), the
//            robots.txt as fetched (status, body, expiry), the circuit breaker and the
//            admission counters (daily fetch quota, discovery ratio) — a restart, or a
//            host evicted from RAM and met again, neither re-fetches robots.txt early nor
//            breaks the host's delay.
//   digests  payload digest -> first stored location (WARC revisit records).
//   schedule recrawl schedule: (next due time, URL fingerprint) -> URL item, one entry per
//            done URL with a next due time (docs/freshness.md). An entry moves back into the
//            host queues, in the same batch, when it comes due.
//   simhash  near-duplicate index: sequence -> (SimHash, URI, record id, date) of stored
//            pages, the newest near_dup_index_max of them (the index is rebuilt from it).
//   pages    stored fetches for the admin API: id (8, big-endian, increasing) -> page record
//            (URL, status, time, mime, title, digest, WARC location), the newest pages_max.
//   parked   admitted URLs of hosts not in RAM, waiting for room in the host table (bounded
//            memory, docs/architecture.md §1.5): (class, host, first sequence) -> the URL
//            items that (class, host) got between two hand-overs of the pending batch.
//   deferred URLs of a host over its budget (discovery ratio, daily fetch quota), waiting
//            to be admitted as its fetches catch up or the next day comes: (host name,
//            sequence) -> URL item (docs/admission.md "Budgets").
//   depths   URL fingerprint -> the least depth (links from a seed) of a path that reached
//            the URL after it was admitted, when shorter than the path it was admitted by
//            (merged by minimum). Read when the URL's links are followed.
//   meta     format version, SimHash version, epoch bits, id counters.
//
// Beside the database, in <state>/admitted-runs, the admitted set: every admitted URL's
// fingerprint (the exact set behind the Bloom filter) as a few sorted runs merged in the
// background (fingerprint_runs.h), each written from ingest_every (500 k) fingerprints; those
// not yet written are kept in RAM and are durable through their queue entries (re-added from
// them after a crash).
//
// The hosts column family also holds the operator's overrides of a host (admin API:
// delay, weight, block; kind 'o').
//
// Commit protocol. The I/O thread's writes (admissions, done marks, host state) accumulate
// in one pending WriteBatch; Commit() hands it to the committer thread, which writes the
// batches atomically and in order. An admitted URL is durable by its queue entry (which
// carries its fingerprint), and a page's done mark lands after the queue entries of the
// links found on it (WAL order). Sync() waits for the handed-over batches and fsyncs the
// write-ahead log (group commit: once per flush interval). A kill -9 loses only a suffix of
// the batches — and nothing written depends on what was lost.
//
// Memory (docs/architecture.md §1.5): the queue store keeps at most `queue_ram_items` items in RAM
// (a window at the head of each host's queue); the rest live only on disk and are read back in key
// order when a host's window runs dry. Per host it keeps ~100 bytes of counters.
//
// Thread-safety: everything is for the I/O thread, except FindDigest/PutDigest/Sync and the
// other calls marked "writer thread" (near-duplicate and page records), which the writer
// thread calls (RocksDB is thread-safe; they do not touch the pending batch).
// The getters (GetSeen, GetPoliteness, GetRobots) first wait for the handed-over batches.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/dedup.h"
#include "frontier/admission.h"
#include "frontier/queue_store.h"
#include "frontier/url_item.h"

namespace harvest::state {

struct StateOptions {
  // Database directory (created if missing). Required.
  std::filesystem::path dir;
  // Queued items kept in RAM across all hosts (the head of each host's queue); beyond it
  // items live only on disk. ~200 bytes each. Default 500 000.
  size_t queue_ram_items = 500'000;
  // Items read from disk at once when a host's RAM window runs dry. Default 16.
  size_t window_per_host = 16;
  // RocksDB block cache: its least size. Default 64 MiB. It grows to twice the index and
  // filter blocks of the state's table files (measured every 10 s while commits go on), so
  // that they stay cached as the crawl grows (docs/architecture.md §5.5), up to
  // `block_cache_max_bytes` (default 512 MiB; equal to `block_cache_bytes`: a fixed size).
  size_t block_cache_bytes = 64u << 20;
  size_t block_cache_max_bytes = 512u << 20;
  // RocksDB memtable size per column family (two may exist at once). Default 32 MiB.
  size_t write_buffer_bytes = 32u << 20;
  // Admitted fingerprints collected in RAM (16 bytes each) before they are written to the
  // admitted set as one sorted table file. Default 500 k.
  size_t ingest_every = 500'000;
  // Queue entries are grouped in epochs of 2^bits admissions (see src/state/internal.h);
  // fixed when the database is created. Default 20 (tests use small epochs).
  int queue_epoch_bits = 20;
  // Commit() writes the pending batch once it holds this many bytes, even mid-loop.
  size_t max_batch_bytes = 4u << 20;
  // Sync() fsyncs the write-ahead log. Default true (false: only the OS cache; survives
  // kill -9 but not a power cut).
  bool sync = true;
  // Hosts evicted from RAM that a Bloom filter remembers, so that only a host that may have
  // records is read back (MayHaveHostRecords); beyond it false positives rise (costing a
  // read each, never a loss). ~1.2 bytes each. Default 4 M (~4.8 MB).
  size_t evicted_hosts = 4'000'000;
  // Page records kept for the admin API (the newest; older ones are deleted in ranges of
  // 1024). ~200 bytes each on disk. Default 10 M.
  uint64_t pages_max = 10'000'000;
};

// A stored fetch (a WARC response or revisit record), for the admin API's /pages.
struct PageEntry {
  uint64_t id = 0;  // assigned by AddPage: increasing, never reused
  std::string url;
  std::string host;  // host[:port] of the URL (filter key)
  int status = 0;
  int64_t fetched_at_us = 0;  // wall clock
  std::string mime;
  std::string title;
  std::string digest;  // WARC-Payload-Digest
  std::string warc_file;
  uint64_t warc_offset = 0;
  uint64_t warc_length = 0;
  bool revisit = false;
  // What the crawler made of the fetch (record format 2): the outcome it recorded in
  // outcomes.jsonl (fetched, revisit, not-modified, gave-up, ...; "retried" for an attempt it
  // asks again) and that line's detail. A format-1 record decodes with the outcome derived
  // from `revisit` and `status` (fetched | revisit | not-modified) and no reason.
  std::string outcome;
  std::string reason;
  // An attempt: a request that left no WARC response or revisit record (a retried answer, no
  // response, a near-duplicate kept as metadata only); its warc_file is empty and status 0
  // means no response (docs/metadata.md "What is a row").
  bool attempt() const { return warc_file.empty(); }
};

// A scan of the page records (ScanPages): ids above `after_id`, oldest first, matching
// every filter given; stops at `limit` matches or after `max_scanned` records read.
struct PageFilter {
  uint64_t after_id = 0;
  std::string host;  // "" = any; else host[:port] or a bare host name (any port)
  std::optional<int> status;
  int64_t since_us = 0;  // fetched at or after (0 = any)
  size_t limit = 100;
  size_t max_scanned = 10'000;
};
struct PageScan {
  std::vector<PageEntry> pages;
  // Where the next call continues (the last id read), when the scan stopped before the end.
  std::optional<uint64_t> next_after_id;
};

// The operator's override of a host (admin API), persisted in the hosts column family.
struct HostOverride {
  int64_t crawl_delay_ms = -1;  // -1: none
  double weight = 0;            // <= 0: none
  bool blocked = false;
  bool empty() const { return crawl_delay_ms < 0 && weight <= 0 && !blocked; }
};

struct SeenRecord {
  enum class State : uint8_t { kQueued = 0, kDone = 1 };
  State state = State::kQueued;
  int status = 0;             // HTTP status of the last fetch (0: none)
  int64_t fetch_time_us = 0;  // wall clock of the last fetch
  int64_t next_due_us = 0;    // when a recrawl is due (0: never); MarkDone schedules it
  std::string etag;           // validators of the last stored response (conditional GET)
  std::string last_modified;
  // Fields below were added with recrawling; records written before decode them as 0/"".
  int64_t interval_ms = 0;     // the recrawl interval that gave next_due_us
  std::string payload_digest;  // of the last stored response ("" if none)
  uint64_t simhash = 0;        // of its text (0: none)
  uint32_t changes = 0;        // fetches that found the content changed
  uint32_t unchanged = 0;      // fetches (304 included) that found it unchanged
};

struct HostPoliteness {
  int64_t next_allowed_us = 0;  // wall clock: no request before it
  int64_t crawl_delay_ms = -1;  // robots.txt Crawl-delay (-1: none)
  std::string dead_reason;      // non-empty: the host's URLs get this outcome, no request
  std::string dead_detail;      // why the host was given up (the outcomes' detail)
};

// A host's circuit breaker (frontier::BreakerState with its time on the wall clock).
struct BreakerRecord {
  bool open = false;
  int64_t open_until_us = 0;  // wall clock
  uint32_t ring_pos = 0, ring_count = 0, ring_errors = 0;
  uint64_t ring_bits = 0;
};

struct RobotsRecord {
  int status = 0;         // HTTP status of the robots.txt fetch (0: unreachable)
  int redirects = 0;      // redirects followed
  int failures = 0;       // consecutive temporary failures
  int64_t expiry_us = 0;  // wall clock
  std::string body;       // decoded body (at most what the parser reads)
  // Trailing fields, absent from older records (decoded as 0):
  int64_t outage_since_us = 0;  // wall clock of the outage's first failure (0: no outage)
  int unreachable = 0;          // of `failures`, the consecutive DNS/connection failures
};

// How a host name answers http:// (docs/politeness.md "http and https"), kept by name (not
// origin): its HSTS policy (RFC 6797) and what the crawl learnt from its redirects.
struct UpgradeRecord {
  int64_t hsts_until_us = 0;        // wall clock: HSTS in force until then (0: none)
  bool include_subdomains = false;  // the HSTS policy covers the name's subdomains
  int streak = 0;                   // same-path http->https permanent redirects in a row
  int64_t learnt_until_us = 0;      // wall clock: learnt as upgrading until then (0: not)
  bool empty() const { return hsts_until_us == 0 && streak == 0 && learnt_until_us == 0; }
};

// The encodings of a URL's seen record and of a host's records as the state stores them; also
// what a shared crawl keeps in its store (src/cluster). Decode* return false on a malformed value.
std::string EncodeSeen(const SeenRecord& r);
bool DecodeSeen(std::string_view value, SeenRecord* r);
std::string EncodePoliteness(const HostPoliteness& p);
bool DecodePoliteness(std::string_view value, HostPoliteness* p);
std::string EncodeRobots(const RobotsRecord& r);
bool DecodeRobots(std::string_view value, RobotsRecord* r);
std::string EncodeBreaker(const BreakerRecord& b);
bool DecodeBreaker(std::string_view value, BreakerRecord* b);
std::string EncodeUpgrade(const UpgradeRecord& u);
bool DecodeUpgrade(std::string_view value, UpgradeRecord* u);
std::string EncodeCounters(const frontier::HostCounters& c);
bool DecodeCounters(std::string_view value, frontier::HostCounters* c);

struct DigestRecord {
  std::string uri;  // where the payload was first stored
  int64_t date_us = 0;
  std::string record_id;  // "<urn:uuid:...>"
};

// A stored page in the near-duplicate index (the writer thread's).
struct SimHashRecord {
  uint64_t hash = 0;
  std::string uri;
  std::string record_id;  // "<urn:uuid:...>" of its response record
  int64_t date_us = 0;
};

// What one stored fetch adds to the state on the writer thread (StateDb::PutStoredFetch),
// each part optional.
struct StoredFetchRecords {
  // payload digest → its first stored location (a new response with a payload)
  std::optional<std::pair<std::string, DigestRecord>> digest;
  // the near-duplicate index's record: sequence → record (a new response with a SimHash)
  std::optional<std::pair<uint64_t, SimHashRecord>> simhash;
  // the admin API's page record; its id is assigned by PutStoredFetch
  std::optional<PageEntry> page;
};

struct StateStats {
  uint64_t queued_on_disk = 0;  // items of queue entries (pending, leased or retrying)
  uint64_t queued_in_ram = 0;   // of those, in RAM windows
  uint64_t hosts = 0;           // host ids given (over all runs)
  uint64_t commits = 0;
  uint64_t syncs = 0;
  uint64_t ingests = 0;               // admitted-set runs written
  uint64_t admitted_runs = 0;         // runs the admitted set has now
  uint64_t admitted_merged = 0;       // fingerprints written by the admitted set's merges
  uint64_t block_cache_bytes = 0;     // the block cache's size now
  uint64_t table_metadata_bytes = 0;  // index and filter blocks of the table files, last measured
};

class StateDb {
 public:
  // Opens (or creates) the database. A database written by an incompatible version, or
  // one RocksDB cannot open, is an error naming the directory.
  static Result<std::unique_ptr<StateDb>> Open(StateOptions options);
  ~StateDb();
  StateDb(const StateDb&) = delete;
  StateDb& operator=(const StateDb&) = delete;

  // True when Open() created the database (a new crawl), false when it existed (a resume).
  bool created() const;
  // The SimHash version of this crawl's fingerprints (near-duplicate index, seen records),
  // fixed when the database is created: dedup::kNewestSimHash for a new one, kV1 for one
  // written before versions existed (meta "simhash_version"). Any thread.
  dedup::SimHashVersion simhash_version() const;

  // The frontier's queue store over the queues column family (one per database; the
  // StateDb must outlive it). Its items are persisted on Push; existing entries are loaded
  // (counted per host, read lazily) when the store is created.
  std::unique_ptr<frontier::QueueStore> NewQueueStore(int priority_classes);
  // Hosts whose queues held items when the store was created (after a restart), with counts.
  // REQUIRES: NewQueueStore() was called.
  void ForEachLoadedHost(const std::function<void(const std::string& host, size_t n)>& fn) const;

  // The exact seen store for dedup::SeenSet (admitted or done).
  dedup::SeenBackend* seen();
  // Every fingerprint of the seen store (Bloom filter rebuild at start).
  Status ForEachSeen(const std::function<void(uint64_t fp)>& fn) const;
  std::optional<SeenRecord> GetSeen(uint64_t fp) const;

  // The URL is done: its queue entry is deleted and its seen record set to `record`; when
  // record.next_due_us > 0 the URL is also scheduled for a recrawl then (same batch).
  void MarkDone(const frontier::UrlItem& item, const SeenRecord& record);

  // Recrawl schedule. Earliest next due time of the scheduled URLs (wall µs), nullopt when
  // none is scheduled. Kept in RAM; O(1).
  std::optional<int64_t> NextDue() const;
  // Commits the pending batch, then takes up to `max` scheduled URLs due at `now_us`,
  // earliest first: for each it deletes the schedule entry in the pending batch and then
  // calls `fn` (which must put the item back in a queue before returning, so the entry's
  // deletion and the new queue entry share a batch). Returns how many were taken.
  size_t TakeDue(int64_t now_us, size_t max, const std::function<void(frontier::UrlItem)>& fn);
  // Moves a done URL's recrawl from record.next_due_us to `due_us` (its seen record,
  // read by GetSeen, is rewritten with the new time). False when the URL has no schedule
  // entry at that time (e.g. it is queued for its recrawl already).
  bool Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us);
  // URLs in the schedule (RocksDB's estimate at open, then kept up to date).
  uint64_t scheduled() const;
  // Parked URLs: admitted URLs of hosts that are not in RAM while the crawl's host table is
  // full (docs/architecture.md §1.5). Park gathers the item with its host's others and
  // writes them to the `parked` column family as one entry when the pending batch is handed
  // over (durable like a queue entry: each carries its fingerprint and a queue sequence, so a
  // crash readmits it the same way). TakeParked hands over the parked URLs
  // of up to `max_hosts` hosts: hosts are met in class order, then host name, going on from
  // where the last call stopped and wrapping once, and each comes with its URLs of every
  // class below `classes` (a host taken for its seed does not come back later, evicted and
  // reloaded, for URLs of a worse class). Each entry is deleted in the batch that fn's queue
  // push lands in. REQUIRES: a queue store (NewQueueStore) exists.
  void Park(const frontier::UrlItem& item);
  size_t TakeParked(size_t max_hosts, int classes,
                    const std::function<void(frontier::UrlItem)>& fn);
  uint64_t parked() const;
  // Deferred URLs: URLs of a host over its budget (discovery ratio, daily fetch quota),
  // waiting on disk to be admitted (docs/admission.md "Budgets"). Defer writes the item,
  // under the host's name, to the `deferred` column family in the pending batch (durable
  // like a queue entry). TakeDeferred hands over up to `max` of the name's URLs, oldest
  // first, each deleted in the batch that fn's queue push lands in. DeferredHosts: the
  // count per host name found when the queue store was created (a resumed crawl's
  // backlogs). REQUIRES: a queue store (NewQueueStore) exists.
  void Defer(std::string_view name, const frontier::UrlItem& item);
  size_t TakeDeferred(std::string_view name, size_t max,
                      const std::function<void(frontier::UrlItem)>& fn);
  uint64_t deferred() const;
  const std::map<std::string, uint64_t>& DeferredHosts() const;
  // Shallower paths (docs/architecture.md §1.5): depth is counted along the path a URL was
  // admitted by, and a URL may be reached by a shorter path after that — typically a page
  // of a host still waiting for room in the host table, first linked through a chain of
  // other hosts. NoteDepth records such a path's depth (the least one is kept; a RAM table
  // of recent notes skips repeats without a write); NotedDepth returns the least depth
  // noted for `fp`, or nullopt, so the crawl follows the URL's links from there.
  void NoteDepth(uint64_t fp, int depth);
  std::optional<int> NotedDepth(uint64_t fp) const;
  // A leased item changed (a retry counted an attempt): its queue entry is rewritten.
  void UpdateQueued(const frontier::UrlItem& item);

  void PutPoliteness(std::string_view host, const HostPoliteness& p);
  std::optional<HostPoliteness> GetPoliteness(std::string_view host) const;
  void PutRobots(std::string_view host, const RobotsRecord& r);
  std::optional<RobotsRecord> GetRobots(std::string_view host) const;
  // Admission's trap counters of a host (daily quota, admitted, fetched), by
  // frontier::Admission::HostHash of its name; written once per loop turn in which they
  // changed (Admission::SaveChanged; pending batch).
  void PutHostCounters(uint64_t host_hash, const frontier::HostCounters& c);
  std::optional<frontier::HostCounters> GetHostCounters(uint64_t host_hash) const;
  // Adds `n` to a host's admitted count without reading its counters (a merge operand in
  // the pending batch); GetHostCounters reads the sum once it is handed over.
  void AddHostAdmitted(uint64_t host_hash, uint64_t n);
  // Every host's saved counters, by host hash.
  Status ForEachHostCounters(
      const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) const;
  void PutBreaker(std::string_view host, const BreakerRecord& b);
  std::optional<BreakerRecord> GetBreaker(std::string_view host) const;
  // A host name's http->https record (by name, e.g. "example.com"); an empty one is erased.
  void PutUpgrade(std::string_view name, const UpgradeRecord& u);
  std::optional<UpgradeRecord> GetUpgrade(std::string_view name) const;

  // Bounded host memory (docs/architecture.md §1.5): a host (by name or counter hash) left
  // RAM and may have records. MayHaveHostRecords is false for a host never noted (a Bloom
  // filter of StateOptions::evicted_hosts): a brand-new host costs no read.
  void NoteHostEvicted(std::string_view host);
  void NoteHostEvicted(uint64_t host_hash);
  bool MayHaveHostRecords(std::string_view host) const;
  bool MayHaveHostRecords(uint64_t host_hash) const;

  // Writes the pending batch (not fsynced). Errors are sticky (see status()). Call it
  // between admissions (not between a URL's seen insert and its frontier Add): once
  // `ingest_every` admissions have accumulated it also syncs the WAL and writes them to the
  // admitted set.
  Status Commit();
  // Fsyncs the write-ahead log (any thread; options.sync = false: no-op).
  Status Sync();
  // The last write error, cleared by the next successful Commit (ok while none). A crawl
  // takes no new work while it is set.
  Status status() const;

  // Writer thread: payload digests (written directly, not through the pending batch).
  std::optional<DigestRecord> FindDigest(const std::string& digest) const;
  Status PutDigest(const std::string& digest, const DigestRecord& record);
  uint64_t digests_found() const;  // FindDigest hits

  // Writer thread: the near-duplicate index's records (written directly). Sequences grow.
  Status PutSimHash(uint64_t seq, const SimHashRecord& record);
  std::optional<SimHashRecord> GetSimHash(uint64_t seq) const;
  // Deletes the records with a sequence below `seq` (evicted from the index).
  Status TrimSimHashes(uint64_t below_seq);
  // The newest `max` records, oldest first (rebuilding the index at start).
  Status ForEachSimHash(size_t max,
                        const std::function<void(uint64_t seq, const SimHashRecord&)>& fn) const;

  // Operator overrides (admin API): written in the pending batch (an empty one deletes the
  // record); ForEachHostOverride reads them all (they are few) at start.
  void PutHostOverride(std::string_view host, const HostOverride& o);
  std::optional<HostOverride> GetHostOverride(std::string_view host) const;
  Status ForEachHostOverride(
      const std::function<void(const std::string& host, const HostOverride&)>& fn) const;

  // Page records. AddPage: the writer thread (written directly; durable with the next
  // Sync); it assigns the id and trims beyond options.pages_max. GetPage and ScanPages:
  // any thread.
  Result<uint64_t> AddPage(PageEntry page);
  // Writer thread: PutDigest + PutSimHash + AddPage of one stored fetch as one atomic
  // RocksDB write (one write-ahead-log append instead of three, the same moment: right
  // after its WARC records, durable with the next Sync). Returns the page's id (0 without a
  // page). A failure writes none of them and is sticky like theirs.
  Result<uint64_t> PutStoredFetch(const StoredFetchRecords& records);
  std::optional<PageEntry> GetPage(uint64_t id) const;
  PageScan ScanPages(const PageFilter& filter) const;
  uint64_t pages_added() const;  // the highest id given (over all runs)

  StateStats stats() const;
  // RocksDB's own statistics (compaction per column family and level, stalls): text.
  std::string EngineStats() const;
  // True while RocksDB runs a flush or a compaction, or the admitted set a merge: a benchmark
  // waits for a while of false before it times reads of a settled state.
  bool BackgroundWorkPending() const;
  // Benchmarks: merges each column family's level-0 tables into the level below them (what a
  // compaction does once enough have piled up; the other levels stay as they are), so that
  // states of different sizes are read in the same shape. Waits for the merges.
  Status MergeLevel0();

  // Testing: closes the database as a killed process leaves it (the pending batch and the
  // admissions not yet ingested are not written). Nothing else may be called afterwards.
  void AbandonForTesting();

  class Impl;

 private:
  explicit StateDb(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Admission's per-host counters in the state's host records (frontier::Admission::
// SetCounterStore; docs/architecture.md §1.5). They are read back only for a resumed crawl
// (`resumed`: the state held an earlier run) or a host that was evicted from RAM, so a
// brand-new host costs no read.
class HostCounterStore final : public frontier::Admission::CounterStore {
 public:
  HostCounterStore(StateDb* db, bool resumed) : db_(db), resumed_(resumed) {}
  bool Load(uint64_t host_hash, frontier::HostCounters* counters) override;
  void Save(uint64_t host_hash, const frontier::HostCounters& counters) override;
  void Evicted(uint64_t host_hash) override;
  bool ListSaved(const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) override;
  void AddAdmitted(uint64_t host_hash, uint64_t n) override;

 private:
  StateDb* const db_;
  const bool resumed_;
};

}  // namespace harvest::state

namespace harvest::state {

// A crawl's state opened read-only (`harvest serve`): RocksDB's read-only mode, so it
// works beside nothing but also never blocks a later crawl; a crawl running on the same
// directory is not seen (the view is the one at open).
class StateReader {
 public:
  static Result<std::unique_ptr<StateReader>> Open(const std::filesystem::path& dir);
  ~StateReader();
  std::optional<PageEntry> GetPage(uint64_t id) const;
  PageScan ScanPages(const PageFilter& filter) const;
  uint64_t pages_added() const;
  std::optional<HostPoliteness> GetPoliteness(std::string_view host) const;
  std::optional<RobotsRecord> GetRobots(std::string_view host) const;
  std::optional<HostOverride> GetHostOverride(std::string_view host) const;
  // RocksDB's estimate of the queue entries (URLs queued when the crawl stopped).
  uint64_t EstimateQueued() const;
  // Every host with a politeness record.
  Status ForEachHost(const std::function<void(const std::string& host)>& fn) const;

  class Impl;

 private:
  explicit StateReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace harvest::state
