// Crawler::Impl: the I/O thread's state and loop (private to src/crawl).
//
// Event-loop-only: everything here but RequestStop() and the worker/inbox hand-off runs on
// the thread that called Run().
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <deque>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/backend.h"
#include "base/mutex.h"
#include "base/zeroed_array.h"
#include "crawl/address_gate.h"
#include "crawl/crawl.h"
#include "crawl/host_table.h"
#include "crawl/metrics.h"
#include "crawl/outcome_log.h"
#include "crawl/page_processor.h"
#include "crawl/robots_gate.h"
#include "crawl/warc_sink.h"
#include "crawl/work_queue.h"
#include "robots/robots.h"

namespace harvest::crawl {

class Crawler::Impl {
 public:
  Impl(CrawlOptions options, Clock* clock);
  ~Impl();
  Status Run(const std::vector<std::string>& seeds);
  void RequestStop();
  void KillForTesting() { killed_ = true; }
  CrawlStats stats() const EXCLUDES(stats_mu_);

  // ---- Admin API (admin_backend.cc, docs/architecture.md §4 "command queue") ----
  // A command runs on the I/O thread with run = true, or with run = false when the crawl
  // ends before it ran (it must still answer its caller). Any thread.
  using Command = std::function<void(bool run)>;
  // False (the command is dropped) when no crawl is running.
  bool PostCommand(Command command) EXCLUDES(commands_mu_);
  bool OnIoThread() const;
  admin::Backend* admin_backend() EXCLUDES(commands_mu_);
  // After Run() returned: the final figures (under final_mu_).
  std::optional<admin::StatusSnapshot> FinalStatus() const EXCLUDES(final_mu_);
  std::optional<MetricsSnapshot> FinalMetrics() const EXCLUDES(final_mu_);
  // I/O thread (run by commands).
  Result<admin::SeedResult> AdminInjectSeeds(const admin::SeedRequest& request);
  admin::StatusSnapshot AdminStatus() const;
  Status AdminSetPolicy(const std::string& host, const admin::HostPolicy& policy);
  Result<nlohmann::json> AdminHost(const std::string& host);
  Status AdminSetBlocked(const std::string& host, bool blocked);
  void AdminPause(bool pause);
  MetricsSnapshot AdminMetrics() const;
  // Page records, any thread (RocksDB is thread-safe): Unavailable before setup and after
  // a KillForTesting.
  Result<state::PageEntry> GetPageRecord(uint64_t id) const EXCLUDES(pages_mu_);
  Result<state::PageScan> ScanPageRecords(const state::PageFilter& filter) const
      EXCLUDES(pages_mu_);
  const std::filesystem::path& out_dir() const { return opts_.out_dir; }

 private:
  // Admission's per-host counters in the crawl state (read back only for a resumed crawl
  // or a host that was evicted).
  class CounterStore final : public frontier::Admission::CounterStore {
   public:
    CounterStore(state::StateDb* db, const bool* resumed) : db_(db), resumed_(resumed) {}
    bool Load(uint64_t host_hash, frontier::HostCounters* counters) override;
    void Save(uint64_t host_hash, const frontier::HostCounters& counters) override;
    void Evicted(uint64_t host_hash) override;

   private:
    state::StateDb* db_;
    const bool* resumed_;
  };
  // A request the fetcher is working on.
  struct InFlight {
    frontier::Lease lease;
    bool robots = false;
    // A recrawl: the URL's seen record before this fetch (validators, digest, interval).
    std::optional<state::SeenRecord> previous;
    bool conditional = false;  // sent If-None-Match / If-Modified-Since
    bool no_request = false;   // failed before a request was made (the name did not resolve)
  };

  // Setup and recovery (crawler.cc, recovery.cc).
  Status Setup();
  Status CheckOutDir() const;
  Status OpenState();
  Status SetupAddresses();
  void RecoverWarcs();
  void RestoreState();
  Status Finish();
  Status AbandonAfterKill();
  // Bounded memory: trims admission's resident counters and evicts the least recently active
  // hosts without work beyond opts_.host_cache (HostTable::Evict). Called right before the
  // state commit, so what an eviction writes is handed over before any reload reads it.
  void EvictHosts();
  // Bounded memory with every host busy (docs/architecture.md §1.5): an admitted URL of a
  // host not in RAM waits in the crawl state (parked) while the host table is full, and
  // enters the frontier when eviction has made room (ActivateParked, once per loop turn).
  void AddOrPark(frontier::UrlItem item);
  void ActivateParked();
  void MarkDone(const frontier::UrlItem& item, int status);
  // The done mark of a URL finished now without a stored capture (MarkDone writes it).
  state::SeenRecord DoneRecordNow(const frontier::UrlItem& item, int status) const;
  void RecordDone(const frontier::UrlItem& item, const state::SeenRecord& record);
  Status CheckShared() const;
  void ConsumeShared();

  // Admission (admit.cc).
  void AdmitSeeds(const std::vector<std::string>& seeds);
  // `priority`: the class to queue it in (injected seeds), else computed.
  frontier::AdmitVerdict Admit(const FoundLink& link, const frontier::UrlItem* source,
                               std::optional<int> priority = std::nullopt);
  void ApplySitemapHint(const FoundLink& link);
  // Adds a batch's links to the in-link sketch before any of them is admitted, so a URL
  // linked from several pages of the batch is admitted with all of them counted.
  void CountInlinks(const std::vector<PageLinks>& batch);
  // The item's priority class (docs/priority.md).
  int PriorityOf(const FoundLink& link, int depth, bool seed) const;

  // Leases and fetches (crawler.cc, fetch_done.cc).
  // ReleaseDue and FillLeases unless the crawl is stopping, paused or over its page limit.
  void StartDue();
  void FillLeases();
  void HandleLease(frontier::Lease lease);
  // `req` carries the connect address (Reachable); the rest is filled here.
  void StartFetch(frontier::Lease lease, bool robots, std::string url, fetch::FetchRequest req);
  // Recrawling (crawler.cc, docs/freshness.md): moves due URLs into the frontier within
  // the recrawl share of the fetch budget.
  void ReleaseDue();
  bool DueNow() const;
  // A leased item left the frontier for good (fetched or given its outcome).
  void LeftFrontier(const frontier::UrlItem& item);
  void CheckStopAfter();
  void OnRobotsDone(InFlight flight, fetch::FetchResult&& result);
  void ApplyRobots(const frontier::Lease& lease, const RobotsGate::FetchStep& step,
                   frontier::Completion* done);
  void OnPageDone(InFlight flight, fetch::FetchResult&& result);
  void NoteIp(const std::string& host, const std::string& ip);
  // DNS (address_gate.h): false when the lease was handled here — put back and held for a
  // lookup, or completed as a DNS failure. Fills the request's connect address.
  bool Reachable(frontier::Lease& lease, bool robots, const std::string& url,
                 fetch::FetchRequest* req);
  // Before a host's first lease: its IP for the per-IP limits. False when the lease was
  // put back (held for a lookup, or to be leased again under its IP's limit).
  bool KnowIp(frontier::Lease& lease);
  void HoldForLookup(frontier::Lease& lease, const std::string& name);
  // Lookups that finished: their hosts are released.
  void ConsumeResolved();
  void GiveUpHost(const std::string& host, const frontier::UrlItem& leased, std::string_view reason,
                  std::string_view detail, int status);
  void KillHost(const std::string& host, std::string_view reason, std::string_view detail);
  // A robots.txt record for the shared crawl, by host key (sent with its capture).
  using SharedRobots = std::pair<std::string, state::RobotsRecord>;
  void DispatchCapture(const frontier::UrlItem& item, fetch::FetchResult&& r, bool robots,
                       std::string outcome, std::string detail,
                       std::optional<state::SeenRecord> previous = std::nullopt,
                       bool not_modified = false,
                       std::optional<SharedRobots> shared_robots = std::nullopt);
  void RecordUnreached();
  // A request that leaves no WARC record: its page record (docs/metadata.md), written by the
  // writer thread; `done`, if any, is marked once that record is durable.
  void SubmitAttempt(const std::string& url, const fetch::FetchResult& r, std::string outcome,
                     std::string reason, std::optional<DurablePage> done = std::nullopt);

  // The process pool (pipeline.cc).
  void Dispatch(PageTask task);
  void ConsumeInbox();
  void WorkerLoop();

  // Admin API plumbing (admin_backend.cc).
  void RunCommands() EXCLUDES(commands_mu_);
  // No more commands: queued ones are answered "not running"; the final figures are kept.
  void CloseCommands() EXCLUDES(commands_mu_);
  void LoadOverrides();
  // Applies the host's operator override to the frontier (on a host's arrival in hosts_).
  void ApplyOverride(const std::string& host);
  void SaveOverride(const std::string& host);
  bool Blocked(const std::string& host) const;
  // Frontier host keys an admin API host name means (known to this crawl).
  std::vector<std::string> ResolveHost(const std::string& host);
  bool KnownHost(const std::string& origin);
  // A page request completed (rates, per-host activity, metrics).
  void NoteCompletion(const std::string& host, const fetch::FetchResult& r, bool got_response);
  void PublishFinal() EXCLUDES(final_mu_);

  bool Finished() const;
  std::chrono::microseconds PollTimeout() const;
  void Progress(bool final_line);
  void Record(std::string_view url, std::string_view outcome, int status, std::string_view detail);
  int64_t WallNow() const { return clock_->WallMicros(); }

  CrawlOptions opts_;
  Clock* clock_;
  std::string product_token_;
  std::atomic<bool> stop_{false};
  bool killed_ = false;  // KillForTesting(): leave as a kill -9 would

  // I/O thread state. db_ first: the frontier's queue store refers to it.
  std::unique_ptr<state::StateDb> db_;
  std::unique_ptr<fetch::Fetcher> owned_fetcher_;  // the default HttpFetcher
  fetch::Fetcher* fetcher_ = nullptr;              // options' fetcher or owned_fetcher_
  std::unique_ptr<frontier::Frontier> frontier_;
  std::unique_ptr<dedup::SeenSet> seen_;
  std::unique_ptr<frontier::Admission> admission_;
  // Priorities (admit.cc, docs/priority.md): in-link counts (nullptr: not counted) and the
  // operator's host weights.
  std::unique_ptr<dedup::CountMinSketch> inlinks_ =
      opts_.priority.inlink_sketch_bytes > 0
          ? std::make_unique<dedup::CountMinSketch>(opts_.priority.inlink_sketch_bytes)
          : nullptr;
  HostWeights host_weights_{opts_.priority.hosts};
  bool resumed_ = false;
  SharedCrawl::Taken shared_in_;  // ConsumeShared's batch
  // Recrawl URLs taken from the shared crawl: the record of their last fetch (by any worker),
  // until they are done.
  std::unordered_map<uint64_t, state::SeenRecord> shared_previous_;
  // Shallower paths (admit.cc): per fingerprint hash, the greatest depth admitted in this
  // run (255: that or more) — a link at no greater depth cannot be shorter than the path its
  // URL was admitted by, and notes nothing. One byte per dedup.seen_cache entry (rounded up
  // to a power of two).
  ZeroedArray<uint8_t> admitted_depth_ =
      ZeroedArray<uint8_t>(std::bit_ceil(std::max<size_t>(opts_.seen.recent_cache, 1)));
  std::unique_ptr<CounterStore> counter_store_;
  std::unique_ptr<RobotsGate> robots_;
  // Per-host state beside the frontier (host_table.h), created once robots_ exists.
  std::unique_ptr<HostTable> hosts_;
  std::unique_ptr<fetch::Resolver> owned_resolver_;  // the default c-ares resolver
  std::unique_ptr<AddressGate> addresses_;
  // Host keys held until the lookup of their name ends, by name.
  std::unordered_map<std::string, std::vector<std::string>> awaiting_dns_;
  std::unordered_map<uint64_t, InFlight> in_flight_;
  uint64_t next_fetch_id_ = 1;
  uint64_t pages_started_ = 0;
  // Recrawl budget (ReleaseDue): recrawl items put in the frontier and not yet leased, and
  // page fetches started for new URLs and for recrawls.
  uint64_t recrawl_queued_ = 0;
  uint64_t new_started_ = 0;
  uint64_t recrawl_started_ = 0;
  bool stopped_after_ = false;
  bool page_limit_reached_ = false;
  Clock::TimePoint started_{};
  Clock::TimePoint last_progress_{};
  uint64_t last_progress_pages_ = 0;
  bool progress_shown_ = false;
  CrawlStats stats_;

  // Pipeline.
  OutcomeLog outcomes_;
  std::unique_ptr<WarcSink> sink_;
  // Created by Setup once the crawl state is open (its SimHash version).
  std::optional<PageProcessor> processor_;
  WorkQueue<PageTask> work_;
  std::vector<std::thread> workers_;
  Mutex inbox_mu_;
  std::vector<PageLinks> inbox_ GUARDED_BY(inbox_mu_);
  uint64_t dispatched_ = 0;  // I/O thread
  uint64_t consumed_ = 0;    // I/O thread
  mutable Mutex stats_mu_;
  CrawlStats published_ GUARDED_BY(stats_mu_);  // a copy of stats_ for other threads

  // Admin API (admin_backend.cc).
  // Made by the first admin_backend() call (any thread).
  std::unique_ptr<admin::Backend> backend_ GUARDED_BY(commands_mu_);
  mutable SharedMutex pages_mu_;
  // db_ may be read by admin threads (shared pages_mu_) while this is true; the I/O thread
  // sets it with pages_mu_ held exclusively.
  bool pages_open_ GUARDED_BY(pages_mu_) = false;
  Mutex commands_mu_;
  std::deque<Command> commands_ GUARDED_BY(commands_mu_);
  bool accepting_ GUARDED_BY(commands_mu_) = false;  // Run() is between setup and finish
  std::atomic<std::thread::id> io_thread_{};
  bool admin_paused_ = false;                                       // I/O thread
  std::unordered_map<std::string, state::HostOverride> overrides_;  // by host key
  SecondRing rate_;
  MetricsSnapshot counters_;  // the counters RenderMetrics needs beyond stats_
  mutable Mutex final_mu_;
  std::optional<admin::StatusSnapshot> final_status_ GUARDED_BY(final_mu_);
  std::optional<MetricsSnapshot> final_metrics_ GUARDED_BY(final_mu_);
};

}  // namespace harvest::crawl
