// Admission: the gate every discovered URL passes before it enters the frontier
// (docs/architecture.md §2 "[admit]"): scope, depth, trap guards, then the seen test.
//
// The caller parses and canonicalises the URL (src/url) and fills an AdmitCandidate; this
// file does not include src/url so that the frontier stays below url in the dependency
// order. See docs/admission.md for the rules and their order.
//
// Budgets (docs/admission.md "Budgets") throttle a host, never drop its URLs: a host over its
// discovery ratio or its daily fetch quota has its new URLs *deferred* (the caller keeps them
// on disk, deduplicated: a deferred URL is in the seen set) and released as its fetches catch
// up or the next UTC day comes. Only a host's backlog beyond max_backlog is refused
// (kTrapBacklogCap), as are the URL-shape traps. A refused URL is not inserted into the seen
// set, so it may be offered (and refused, and recorded) again.
//
// A host here is its name (lower-case, no port): every scheme and port of a name shares its
// counters, as they share its politeness slot (docs/architecture.md §1.1).
//
// Thread-safety: not synchronised; owned by the I/O thread like the frontier and SeenSet.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "dedup/dedup.h"

namespace harvest::frontier {

// Which hosts a crawl may reach, relative to its seeds (docs/admission.md).
enum class ScopeMode {
  kAny,   // every host: follow every link
  kHost,  // only the seeds' host names (port and scheme ignored, case-insensitive)
  kSite,  // only the seeds' registrable domains ("www.a.com", "a.com" and "x.a.com": one site)
};

// "any", "host", "site".
const char* ScopeModeName(ScopeMode mode);
// Sets *mode from its name (exact, lower-case); false (and *mode untouched) for any other.
bool ParseScopeMode(std::string_view name, ScopeMode* mode);

struct ScopeOptions {
  // Hosts reachable relative to the seeds registered with Admission::AddSeed. Combines with
  // the checks below: a URL must pass all of them. Default: kAny.
  ScopeMode mode = ScopeMode::kAny;
  // Hosts allowed: a host equal to an entry or a subdomain of it ("example.com" allows
  // "www.example.com"). Case-insensitive; a port on the candidate host is ignored.
  // Default: empty = every host.
  std::vector<std::string> allowed_domains;
  // Patterns on the canonical URL. A pattern containing '*' is a glob over the whole URL
  // ('*' matches any run of characters, including none); one without '*' matches as a
  // substring. include: when non-empty, a URL must match at least one. exclude: a URL
  // matching any is out of scope. Default: empty.
  std::vector<std::string> include_patterns;
  std::vector<std::string> exclude_patterns;
  // Links deeper than this (seeds are depth 0) are refused. Default: 10.
  int max_depth = 10;
};

struct TrapOptions {
  // Longer canonical URLs are refused (calendars and session ids grow URLs). Default: 2048.
  size_t max_url_length = 2048;
  // More '&'-separated query parameters than this are refused. Default: 10.
  size_t max_query_params = 10;
  // A path segment occurring this many times or more (/a/b/a/b/a/) is a loop. Default: 3.
  int max_repeated_segment = 3;
  // Requests made (pages and robots.txt) per host name per UTC day. A host that reached it
  // is not fetched again before the next day; its new URLs are deferred. 0: no quota.
  // Default: 100 000.
  uint64_t host_daily_quota = 100000;
  // After discovery_ratio_after admissions for a host, its new URLs are deferred while
  // admitted / max(fetched, 1) exceeds this (a host that generates links faster than they
  // are fetched: a hub page, a big sitemap, or a trap); they are released as its fetches
  // catch up. 0: no ratio. Default: 50.
  double max_discovery_ratio = 50;
  // Admissions of a host before its ratio is judged (small sites legitimately link to far
  // more pages than were fetched so far); also the batch an idle host's backlog is released
  // by at least (Admission::Releasable). Default: 1000.
  uint64_t discovery_ratio_after = 1000;
  // Deferred URLs a host may have waiting on disk; its new URLs beyond are refused
  // (trap-backlog-cap): what bounds an endless URL space. Default: 1 000 000.
  uint64_t max_backlog = 1000000;
};

struct AdmitCandidate {
  std::string_view canonical_url;
  std::string_view host;  // lower-case; may carry ":port"
  std::string_view path;
  std::string_view query;               // without '?'
  std::string_view registrable_domain;  // "" when there is none (IP address, "localhost")
  uint64_t fp = 0;
  int depth = 0;
};

// A host's budget counters (daily fetch quota, discovery ratio). Persisted by the crawl
// through Admission::CounterStore so a restart or an eviction from RAM keeps them.
struct HostCounters {
  int64_t day = -1;  // UTC day of fetched_today
  uint64_t fetched_today = 0;
  uint64_t admitted = 0;  // all time (deferred URLs count once released), for the ratio
  uint64_t fetched = 0;   // all time
};

// A host's budget: open, or why its new URLs are deferred.
enum class Budget { kOpen, kDiscoveryRatio, kDailyQuota };
// "open", "discovery-ratio", "daily-quota".
const char* BudgetName(Budget b);

enum class AdmitVerdict {
  kAccept,
  kSeen,
  kOutOfScope,
  kTooDeep,
  kTrapLongUrl,
  kTrapManyParams,
  kTrapRepeatedSegment,
  kDeferredRatio,  // accepted into the host's backlog: the discovery ratio is exceeded
  kDeferredQuota,  // accepted into the host's backlog: the daily fetch quota is reached
  kTrapBacklogCap,
};
inline constexpr size_t kAdmitVerdictCount = 10;

// "accept", "seen", "out-of-scope", "too-deep", "trap-long-url", "trap-many-params",
// "trap-repeated-segment", "deferred-discovery-ratio", "deferred-quota", "trap-backlog-cap"
// (the trap names are the crawl's outcome names).
const char* VerdictName(AdmitVerdict v);

// True if `url` matches `pattern` as documented in ScopeOptions.
bool MatchUrlPattern(std::string_view pattern, std::string_view url);

class Admission {
 public:
  // `seen` and `clock` must outlive this object; clock nullptr = SystemClock.
  Admission(ScopeOptions scope, TrapOptions traps, dedup::SeenSet* seen, Clock* clock);

  // Registers a seed's host (may carry ":port") and registrable domain ("" when it has none:
  // then its host stands for its site) for ScopeMode kHost and kSite. Call it for every seed
  // before admitting it: a seed is then in scope for the mode by construction.
  void AddSeed(std::string_view host, std::string_view registrable_domain);

  // Checks, in order: depth, scope, URL-shape traps (length, params, repeated segment),
  // seen (kSeen, no insert), then the host's budget: open, the fingerprint goes into the
  // seen set and kAccept; over it, the URL is deferred (kDeferredRatio, kDeferredQuota: the
  // fingerprint goes into the seen set and the caller must keep the URL in the host's
  // backlog), unless the backlog holds max_backlog URLs (kTrapBacklogCap, no insert).
  AdmitVerdict Admit(const AdmitCandidate& c);
  // Starts loading the seen-set memory an Admit of `fp` will read: prefetch a page's links,
  // then admit them, and the cache misses of their lookups overlap.
  void Prefetch(uint64_t fp) const;
  // A page of host name `name` was fetched (a request was made): its fetches, today's and
  // all time.
  void NoteFetched(std::string_view name);
  // False when the name's fetches today reached host_daily_quota: no request before the
  // next UTC day (NextDayMicros).
  bool MayFetch(std::string_view name);
  // The wall time (µs) the next UTC day starts.
  int64_t NextDayMicros() const;

  // ---- Backlogs (deferred URLs, kept by the caller) ----
  // How many of the name's deferred URLs may be admitted now: none while its daily quota
  // is reached; else what the discovery ratio allows, and at least discovery_ratio_after when
  // `host_idle` (nothing of the host queued: its admitted URLs were all dealt with, some
  // perhaps without a request — disallowed, given up — so its fetches alone would never
  // catch up). At most its backlog.
  uint64_t Releasable(std::string_view name, bool host_idle);
  // `n` of the name's deferred URLs were admitted (they count as admitted from now).
  void NoteReleased(std::string_view name, uint64_t n);
  // The caller found the name's backlog empty: its count is corrected to 0.
  void ClearBacklog(std::string_view name);
  // A resumed crawl: the name has `n` URLs deferred on disk.
  void RestoreBacklog(std::string_view name, uint64_t n);
  // Names with deferred URLs, and how many each (at most the hosts over their budget).
  // Hashes names for lookups by string_view (no std::string made per lookup).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using Backlogs = std::unordered_map<std::string, uint64_t, NameHash, std::equal_to<>>;
  const Backlogs& backlogs() const { return backlogs_; }
  uint64_t backlog_total() const { return backlog_total_; }
  uint64_t released_total() const { return released_total_; }
  // A shared crawl: the name's counters as the worker that fetched it before saved them
  // (they replace what this worker had: it did not fetch the host meanwhile).
  void HandOverCounters(std::string_view name, const HostCounters& c);
  // The name's budget now and its counters (the admin API's host view).
  Budget BudgetOf(std::string_view name);
  HostCounters CountersOf(std::string_view name);
  // Names that reached their daily quota today (cleared when the day changes).
  size_t hosts_over_quota() const;

  uint64_t count(AdmitVerdict v) const { return counts_[static_cast<size_t>(v)]; }
  const ScopeOptions& scope() const { return scope_; }

  // Where the per-host counters persist (docs/architecture.md §1.5). Keys are HostHash().
  class CounterStore {
   public:
    virtual ~CounterStore() = default;
    // The saved counters of a host met again (after a restart or an eviction); false when
    // there are none (a new host: should cost no read).
    virtual bool Load(uint64_t host_hash, HostCounters* counters) = 0;
    // The counters changed: called once per host by SaveChanged() (and TrimResident), with
    // the host's counters after all the changes since the last call (a page's links to its
    // own host are one write, not one per link).
    virtual void Save(uint64_t host_hash, const HostCounters& counters) = 0;
    // The host's counters left RAM (they were saved before).
    virtual void Evicted(uint64_t host_hash) = 0;
    // Blind increments (optional). A store that can add to a host's admitted count without
    // reading its counters (AddAdmitted; a later Load sees the sum) lists every host whose
    // counters it holds, calling `fn` for each, and returns true; Admission then admits a link
    // to a host whose counters are not in RAM without loading them while a bound of the
    // host's activity proves its budget open. False (the default): every such link loads.
    virtual bool ListSaved(const std::function<void(uint64_t, const HostCounters&)>& /*fn*/) {
      return false;
    }
    virtual void AddAdmitted(uint64_t /*host_hash*/, uint64_t /*n*/) {}
  };
  // Off: Admit judges no budget (never defers); the daily quota still holds through MayFetch.
  // A worker of a shared crawl admits links to hosts other workers fetch, whose fetches its
  // counters do not see (docs/distributed.md). Default: on.
  void SetDeferOverBudget(bool on) { defer_over_budget_ = on; }

  // Persists the counters through `store` (not owned; nullptr: RAM only); TrimResident keeps
  // at most `max_resident` hosts' counters in RAM (0: unbounded). A store that takes blind
  // increments (CounterStore::ListSaved) is listed once here, to bound the activity of the
  // hosts it holds.
  void SetCounterStore(CounterStore* store, size_t max_resident);
  // Saves the counters changed since the last call through the store, then evicts the
  // oldest counters beyond max_resident (first met, first out). Call it where the store's
  // writes are handed over next, so a reload reads them (the crawler: right before its
  // state commit).
  void TrimResident();
  // Saves the counters changed since the last call through the store, and the admissions
  // counted blind since then (TrimResident does it too); the crawler calls it before its last
  // commit.
  void SaveChanged();
  // A stable 64-bit hash (FNV-1a) of a host name: the counters' key in RAM and on disk.
  static uint64_t HostHash(std::string_view host);
  size_t hosts_resident() const { return hosts_.size(); }
  // Admissions to hosts whose counters were not in RAM, counted without loading them.
  uint64_t admitted_blind() const { return admitted_blind_; }
  // Memory of the activity bound (0 without a store that takes blind increments).
  size_t activity_bound_bytes() const { return activity_ ? activity_->memory_bytes() : 0; }

 private:
  AdmitVerdict Judge(const AdmitCandidate& c);
  bool InScope(const AdmitCandidate& c) const;
  bool InModeScope(const AdmitCandidate& c) const;
  AdmitVerdict ShapeTrap(const AdmitCandidate& c) const;
  // Starts a new UTC day on the counters when theirs is over.
  void RollDay(HostCounters* h) const;
  Budget BudgetFor(const HostCounters& h) const;
  // Clears the names over quota when the UTC day changed since the last call.
  void RollQuotaDay();

  ScopeOptions scope_;
  TrapOptions traps_;
  dedup::SeenSet* seen_;
  Clock* clock_;
  // The seeds' host names (lower-case, no port) for ScopeMode kHost, or their sites
  // (registrable domain, or the host name when there is none) for kSite, as 64-bit keys of
  // the name: about 32 bytes per seed host rather than a string node (a crawl seeded with
  // millions of hosts keeps them all). A name of another host sharing a seed's key (odds
  // ~1e-13 per name at a million seeds) would count as in scope; no seed is ever out.
  struct Identity {
    size_t operator()(uint64_t h) const { return static_cast<size_t>(h); }
  };
  std::unordered_set<uint64_t, Identity> seed_names_;
  struct Resident {
    HostCounters counters;
    bool changed = false;  // listed in changed_: not saved since its last change
  };
  // The host's resident counters (loaded from the store when it enters RAM); its key,
  // HostHash(host), into *key.
  Resident& CountersFor(std::string_view host, uint64_t* key);
  Resident& CountersFor(uint64_t key);  // key: HostHash of the host's name
  // After a change to the counters of r (key `key`): listed for SaveChanged().
  void NoteChanged(uint64_t key, Resident* r);
  // True when the budget of host `key`, whose counters are not in RAM, is open for certain:
  // its activity bound is below every active budget's threshold (or budgets are off). Such
  // an admission is counted blind (blind_admitted_) instead of loading the counters.
  bool CertainlyOpen(uint64_t key) const;
  // Raises the activity bound of host `key` to at least its admitted + fetched counts.
  void RaiseBound(uint64_t key, const HostCounters& c);
  // Keyed by a 64-bit hash of the host name (no port), not the name: ~70 bytes less per host (a
  // crawl of millions of hosts keeps one entry each). Two hosts sharing a hash (odds ~1e-8 at a
  // million hosts) would share their trap counters, nothing else.
  std::unordered_map<uint64_t, Resident, Identity> hosts_;
  std::vector<uint64_t> changed_;  // with a counter store: keys of hosts_ to save
  // With a counter store: insertion order of hosts_, for the bounded resident set.
  CounterStore* counter_store_ = nullptr;
  size_t max_resident_ = 0;
  std::deque<uint64_t> order_;
  // With a store that takes blind increments: an upper bound of admitted + fetched per host
  // (a count-min sketch, so a bound for every host at a fixed size; it is >= the admitted
  // count and today's fetches, the two figures a budget judges). Raised as a host's counters
  // leave RAM, by every blind admission, and from the store's list when it is set. A host
  // whose bound reaches a threshold is loaded as before: a full sketch only costs speed.
  std::optional<dedup::CountMinSketch> activity_;
  // Admissions counted blind since the last SaveChanged, per host not in RAM: written to the
  // store as increments by SaveChanged, or added to the counters if the host enters RAM first.
  std::unordered_map<uint64_t, uint64_t, Identity> blind_admitted_;
  uint64_t admitted_blind_ = 0;
  std::array<uint64_t, kAdmitVerdictCount> counts_{};
  // Deferred URLs per name (only names with some: at most one per discovery_ratio_after
  // admissions, or per host_daily_quota fetches) and in total; released in total.
  Backlogs backlogs_;
  uint64_t backlog_total_ = 0;
  uint64_t released_total_ = 0;
  // Names whose fetches reached the quota on quota_day_.
  std::unordered_set<std::string, NameHash, std::equal_to<>> over_quota_;
  int64_t quota_day_ = -1;
  bool defer_over_budget_ = true;
};

}  // namespace harvest::frontier
