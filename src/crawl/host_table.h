// HostTable: the crawl's per-host state beside the frontier (docs/architecture.md §1.5) —
// what the crawl knows of each host in RAM (given up, its robots.txt Crawl-delay, whether its
// IP is known, what it did in this run), the LRU order that bounds that RAM, and the host's
// durable records: its politeness record (next-allowed time, Crawl-delay, dead reason) and
// its circuit breaker, written to the crawl state (and, in a shared crawl, to the shared
// store) only when a restart or a reload after eviction needs them.
//
// A host enters the table the first time the crawl touches it in this run (Ensure). A host
// met again after an eviction, or first met in a resumed crawl, gets its saved robots.txt
// rules, breaker and politeness back into the frontier and the robots gate; a host of a
// partition taken over from another worker gets the state that worker saved (HandOver).
//
// The operator's overrides (admin API: a delay, a weight, a block) are kept here too, by host,
// persisted in the state's `hosts` family and applied to the frontier when their host enters
// the table.
//
// Keyed like frontier hosts: scheme://name[:port].
//
// Thread-safety: event-loop-only; every method asserts it runs on the crawl's I/O thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "base/thread_checker.h"
#include "crawl/https_upgrades.h"
#include "crawl/metrics.h"
#include "crawl/robots_gate.h"
#include "crawl/shared_crawl.h"
#include "frontier/frontier.h"
#include "state/state.h"

namespace harvest::crawl {

class HostTable {
 public:
  struct Host {
    std::string dead_reason;  // non-empty: the host's URLs get this outcome, no request
    std::string dead_detail;  // why (e.g. "robots.txt: HTTP 503 (3 attempts)")
    bool ip_known = false;
    int64_t crawl_delay_ms = -1;  // robots.txt Crawl-delay (persisted with the host)
    // Admin API: what the host did in this run (allocated on its first completed request).
    std::unique_ptr<HostActivity> activity;

   private:
    friend class HostTable;
    std::list<const std::string*>::iterator lru;  // the host's place in lru_
    // The breaker as last saved (SaveBreaker writes only changes).
    bool breaker_saved = false;
    bool breaker_open = false;
    Clock::TimePoint breaker_until{};
    // The politeness record as last written, which holds only what a restart or a reload
    // after eviction needs; `politeness_stale`: a completion since moved the next-allowed
    // time past the record (Evict writes it then).
    bool politeness_saved = false;
    bool politeness_stale = false;
    int64_t saved_next_allowed_us = 0;
    int64_t saved_crawl_delay_ms = -1;
  };

  struct Options {
    bool resumed = false;             // the crawl state held an earlier run: hosts are read back
    HttpsUpgrades::Options upgrades;  // (its `resumed` is taken from above)
  };

  // What the table did in this run (merged into CrawlStats).
  struct Stats {
    uint64_t evicted = 0;        // hosts evicted from RAM
    uint64_t reloaded = 0;       // evicted hosts met again and reloaded from the state
    uint64_t resident = 0;       // hosts in RAM after the last eviction pass
    uint64_t resident_peak = 0;  // the largest size after an eviction pass
  };

  // `frontier`, `robots` and `db` must outlive the table; `shared` may be nullptr (a crawl of
  // one process).
  HostTable(Options options, Clock* clock, state::StateDb* db, frontier::Frontier* frontier,
            RobotsGate* robots, SharedCrawl* shared);
  HostTable(const HostTable&) = delete;
  HostTable& operator=(const HostTable&) = delete;

  // The time this run started: a host read back after a restart waits its full delay from
  // then (a request of the last run may have been in flight when it died).
  void SetRunStart(Clock::TimePoint start);

  // The host's entry, loaded from the crawl state the first time this run touches it; marks
  // it the most recently active.
  Host& Ensure(const std::string& name);
  bool Contains(const std::string& name) const;
  size_t size() const;
  // Every resident host, in no order.
  const std::unordered_map<std::string, Host>& hosts() const;

  // A request of the host completed: its politeness record (next allowed: now plus its delay,
  // or `retry_after` when longer) and its breaker, written when they changed in a way that
  // matters to a restart.
  void SavePoliteness(const std::string& name,
                      std::optional<std::chrono::milliseconds> retry_after);
  // Evicts the least recently active hosts without work while more than `cap` are resident
  // (amortised O(1) per host event). Call right before the state commit, so what an eviction
  // writes is handed over before any reload reads it.
  void Evict(size_t cap);
  // A host of a partition this worker took over: its saved state replaces what this process
  // knows of it (applied when the host next enters RAM).
  void HandOver(SharedCrawl::HostHandover h);
  // Sends a host's records to the shared crawl (nothing without one).
  void PutShared(const std::string& name, const SharedCrawl::HostRecords& parts);
  // The IP the host is reached at (the frontier's per-IP limits): from the address gate before
  // its first request, then from each response. Nothing for an empty `ip`.
  void NoteIp(const std::string& name, const std::string& ip);

  // ---- The operator's overrides ----
  // Reads the overrides saved in the crawl state; call before any host enters the table.
  // `on_weight` gets each host's weight override.
  void LoadOverrides(const std::function<void(const std::string& host, double weight)>& on_weight);
  // The host's override, created empty when absent; SaveOverride writes it.
  state::HostOverride& Override(const std::string& name);
  // nullptr when the host has none.
  const state::HostOverride* FindOverride(const std::string& name) const;
  // Writes the host's override to the pending batch (an empty one is erased).
  void SaveOverride(const std::string& name);
  bool Blocked(const std::string& name) const;
  // Every override, by host.
  const std::unordered_map<std::string, state::HostOverride>& overrides() const;

  // The monotonic time of a wall-clock time in µs.
  Clock::TimePoint SteadyFromWall(int64_t wall_us) const;

  const Stats& stats() const { return stats_; }
  // The names known to upgrade http to https (HSTS, learnt): host state kept by name.
  HttpsUpgrades& upgrades() { return upgrades_; }

 private:
  // The host's override (delay, block) to the frontier.
  void ApplyOverride(const std::string& name);
  // The host's robots rules, breaker and politeness back into the frontier and the robots
  // gate; the first request not before `not_before`.
  void Restore(const std::string& name, Host& host,
               const std::optional<state::RobotsRecord>& robots,
               const std::optional<state::BreakerRecord>& breaker,
               const std::optional<state::HostPoliteness>& politeness, Clock::TimePoint not_before);
  // The host's politeness record with next-allowed wall time `next_allowed_us`.
  static state::HostPoliteness PolitenessOf(const Host& host, int64_t next_allowed_us);
  // Writes the politeness record `p` to the local state and notes it in `host`.
  void WritePoliteness(const std::string& name, Host& host, const state::HostPoliteness& p);
  // Persists the breaker when it changed (or, evicting, whenever it is not empty).
  void SaveBreaker(const std::string& name, Host& host, bool evicting);

  const Options options_;
  Clock* const clock_;
  state::StateDb* const db_;
  frontier::Frontier* const frontier_;
  RobotsGate* const robots_;
  SharedCrawl* const shared_;
  HttpsUpgrades upgrades_;
  ThreadChecker thread_;
  std::unordered_map<std::string, state::HostOverride> overrides_;  // by host
  Clock::TimePoint run_start_{};

  std::unordered_map<std::string, Host> hosts_;
  std::list<const std::string*> lru_;  // hosts_' keys, least recently active first
  uint64_t events_ = 0;                // Ensure calls since the last Evict
  // Hosts taken over and not in RAM yet: their saved state, applied by Ensure.
  std::unordered_map<std::string, SharedCrawl::HostHandover> handed_over_;
  Stats stats_;
};

}  // namespace harvest::crawl
