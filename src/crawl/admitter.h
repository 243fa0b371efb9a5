// Admitter: admission glue on the I/O thread (docs/architecture.md §2 [admit], docs/priority.md)
// — seeds and discovered links go through the admission rules (scope, depth, traps, the seen
// set) and, accepted, into the frontier with their priority class (in-link counts, host
// weights, sitemaps); a URL of a host with no room in RAM waits in the crawl state (parked)
// until eviction makes room (§1.5); a link that reaches a known URL by a shorter path notes
// that depth; a sitemap's <lastmod>/<changefreq> may bring a recrawl forward. A host over its
// budget (discovery ratio, daily fetch quota) has its new URLs deferred on disk and released
// as its fetches catch up or the next day comes (docs/admission.md "Budgets").
//
// It owns the seen set, admission (with its per-host counters in the crawl state) and the
// priority inputs. Thread-safety: event-loop-only; every method asserts it runs on the
// crawl's I/O thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "base/zeroed_array.h"
#include "crawl/crawl.h"
#include "crawl/host_table.h"
#include "crawl/outcome_log.h"
#include "crawl/page_processor.h"
#include "dedup/dedup.h"
#include "frontier/admission.h"
#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::crawl {

class Admitter {
 public:
  // What the admitter did in this run (merged into CrawlStats).
  struct Counters {
    uint64_t seeds = 0;
    uint64_t admitted = 0;
    uint64_t rejected = 0;
    uint64_t depth_lowered = 0;
    uint64_t sitemap_hints = 0;
    uint64_t unparked = 0;
    uint64_t deferred = 0;         // URLs deferred (over their host's budget)
    uint64_t released = 0;         // deferred URLs admitted since
    uint64_t backlog_refused = 0;  // refused: their host's backlog was full
    uint64_t hosts_deferred = 0;   // hosts that had URLs deferred in this run
    void AddTo(CrawlStats* stats) const;
  };

  // Everything given must outlive the admitter; `db` is open.
  Admitter(const CrawlOptions& opts, Clock* clock, state::StateDb* db, frontier::Frontier* frontier,
           HostTable* hosts, OutcomeLog* outcomes);
  Admitter(const Admitter&) = delete;
  Admitter& operator=(const Admitter&) = delete;

  // The run's seeds (an invalid one is logged and skipped).
  void AdmitSeeds(const std::vector<std::string>& seeds);
  // A seed injected by the operator; `priority`: its class, else computed.
  frontier::AdmitVerdict AdmitSeed(const FoundLink& link, std::optional<int> priority);
  // A link found on `source` (a page, a robots.txt Sitemap line, a redirect).
  frontier::AdmitVerdict Admit(const FoundLink& link, const frontier::UrlItem& source);
  // Processed pages' links: counted as in-links first (a URL linked from several pages of the
  // batch is admitted with all of them counted), then admitted from the shortest path known
  // to each page.
  void AdmitLinks(std::vector<PageLinks>* batch);
  // Into the frontier, or parked while the host table is full (docs/architecture.md §1.5).
  void AddOrPark(frontier::UrlItem item);
  // Parked URLs enter the frontier, host by host, once eviction has made room (a loop turn).
  void ActivateParked();

  // Admission's side: a page of the host (by name) was fetched (the discovery ratio, the
  // daily quota); its changed per-host counters to the state; the resident counters trimmed
  // (bounded memory).
  void NoteFetched(std::string_view host_name);
  // False while the name's daily fetch quota is reached (then no request before
  // NextDayMicros()).
  bool MayFetch(std::string_view host_name);
  int64_t NextDayMicros() const;
  // A shared crawl's host name taken over: its budget counters as its last owner saved them.
  void HandOverCounters(std::string_view host_name, const frontier::HostCounters& c);
  // Deferred URLs enter the frontier as their hosts' budgets allow (a loop turn): hosts
  // with a backlog that fetched since the last call, or all of them when a new day began.
  void ReleaseDeferred();
  // URLs deferred on disk now; hosts with some; hosts that reached their daily quota today.
  uint64_t deferred() const;
  size_t hosts_throttled() const;
  size_t hosts_over_quota() const;
  // A host's budget for the admin API: its counters, budget and backlog.
  struct HostBudget {
    frontier::HostCounters counters;
    frontier::Budget budget = frontier::Budget::kOpen;
    uint64_t backlog = 0;
  };
  HostBudget BudgetOf(std::string_view host_name);
  void SaveChanged();
  void TrimResident();
  // A resumed crawl's seen fingerprint into the seen set's filter.
  void PreloadSeen(uint64_t fp);
  // Links refused because their URL was already admitted.
  uint64_t seen_refusals() const;
  HostWeights& weights();
  const Counters& counters() const;

 private:
  // source == nullptr: a seed (depth 0); `priority`: the class to queue it in, else computed.
  frontier::AdmitVerdict AdmitFrom(const FoundLink& link, const frontier::UrlItem* source,
                                   std::optional<int> priority);
  // The https:// twin of an http:// link whose host upgrades (HttpsUpgrades), else nullopt.
  std::optional<FoundLink> UpgradedTwin(const FoundLink& link);
  void CountInlinks(const std::vector<PageLinks>& batch);
  // The item's priority class (docs/priority.md).
  int PriorityOf(const FoundLink& link, int depth, bool seed) const;
  void ApplySitemapHint(const FoundLink& link);
  void Record(std::string_view url, std::string_view outcome, std::string_view detail);
  // A URL over its host's budget (verdict kDeferred*) into the host's backlog on disk.
  void Defer(frontier::UrlItem item, frontier::AdmitVerdict why);
  // A shared crawl: the counters of the names fetched since the last call to the shared
  // crawl (SaveChanged, TrimResident).
  void PutSharedCounters();
  // The detail of a trap-backlog-cap outcome.
  std::string BacklogFullDetail(std::string_view name);

  const CrawlOptions& opts_;
  Clock* const clock_;
  state::StateDb* const db_;
  frontier::Frontier* const frontier_;
  HostTable* const hosts_;
  OutcomeLog* const outcomes_;
  const bool resumed_;  // the state held an earlier run
  ThreadChecker thread_;
  dedup::SeenSet seen_;
  state::HostCounterStore counter_store_;
  frontier::Admission admission_;
  // In-link counts (nullptr: not counted) and the operator's host weights.
  std::unique_ptr<dedup::CountMinSketch> inlinks_;
  HostWeights host_weights_;
  // Shallower paths: per fingerprint hash, the greatest depth admitted in this run (255:
  // that or more) — a link at no greater depth cannot be shorter than the path its URL was
  // admitted by, and notes nothing. One byte per dedup.seen_cache entry (rounded up to a
  // power of two).
  ZeroedArray<uint8_t> admitted_depth_;
  // Names with a backlog to look at in the next ReleaseDeferred (they fetched, or were
  // restored), and the UTC day it last ran (a new day looks at every backlog).
  std::unordered_set<std::string> release_check_;
  int64_t release_day_ = -1;
  // The origin of a name's latest deferred URL: whether the host is idle (Releasable).
  std::unordered_map<std::string, std::string> backlog_origin_;
  std::unordered_set<std::string> shared_counters_;  // names whose counters to PutHost
  Counters counters_;
};

}  // namespace harvest::crawl
