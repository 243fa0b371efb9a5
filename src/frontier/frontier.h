// Frontier: the politeness scheduler. It holds the URLs waiting to be fetched, one queue per
// host, and hands out leases so that the crawl honours docs/architecture.md §1.1:
//
//  * at most one request in flight per host name: a host (an origin, scheme://name[:port])
//    is busy from Next() to Complete(), and the other hosts of its name — http://a,
//    https://a and https://a:8443 are one server to its operator — wait meanwhile;
//  * the next request to a host name starts no earlier than the previous one's end (the
//    time Complete() is called) plus the delay of the host it went to:
//      delay = max(default_delay, robots Crawl-delay, Retry-After of this completion,
//                  operator override, adaptive_factor * last response time);
//    a Crawl-delay above max_crawl_delay marks the host skipped (HostSkipped());
//  * optionally at most per_ip_limit requests in flight per IP address, and leases of hosts
//    sharing an IP at least per_ip_gap apart;
//  * retryable failures come back after a backoff, up to max_attempts;
//  * a per-host circuit breaker pauses hosts that keep failing.
// Rules in detail: docs/politeness.md. Scheduling: hosts sit in a min-heap keyed by the time
// they become ready (lazy deletion: a host's stale entries are skipped by generation). With
// cross_host_priority (the default), Next() moves the hosts whose time has come into a
// second heap ordered by the priority class of their best item (then by ready time, so
// equal classes are served in the order they became ready) and serves its top: with a page
// budget the best pages come first (Mercator's front queues, across hosts; docs/priority.md).
// Both heaps cost O(log hosts) amortised per Next(). Within a host: due retries first, then
// the lowest priority class, FIFO within a class.
//
// Queued items live behind QueueStore (queue_store.h) so a disk-backed store can replace
// the in-memory one; host state (delays, breaker, retries waiting for their backoff) is
// kept in memory.
//
// Departures: NextWakeup() ignores hosts waiting only for a per-IP slot or for their own
// lease to end — those become ready through Complete(), which the caller awaits anyway.
// A host's class in the ready heap is taken when it enters it: a retry falling due while the
// host waits there does not raise it (an Add of a better item does).
//
// Thread-safety: none. Owned and called by the crawl engine's I/O thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "frontier/admission.h"
#include "frontier/queue_store.h"
#include "frontier/url_item.h"

namespace harvest::frontier {

struct FrontierOptions {
  // Delay between the end of one request to a host and the start of the next (docs/architecture.md
  // §1.1). Default: 1 s.
  std::chrono::milliseconds default_delay{1000};
  // A robots.txt Crawl-delay above this marks the host skipped (its URLs get a recorded
  // outcome instead of a fetch). Default: 300 s.
  std::chrono::milliseconds max_crawl_delay{300000};
  // > 0: the delay is at least factor * the host's last response time. Default: 0 (off).
  double adaptive_factor = 0;
  // > 0: at most this many requests in flight per IP address (shared hosting: thousands of
  // virtual hosts may share one). 0: no per-IP limits at all (neither this cap nor
  // per_ip_gap). Default: 10.
  size_t per_ip_limit = 10;
  // > 0: two leases of hosts sharing an IP (SetHostIp) start at least this far apart.
  // Default: 0 (off).
  std::chrono::milliseconds per_ip_gap{0};
  // Attempts for retryable errors; the attempt that reaches it is final. Default: 3.
  int max_attempts = 3;
  // Wait before retry n (1-based) is backoff[n-1]; the last entry repeats. Default: 30 s,
  // 120 s, 300 s.
  std::vector<std::chrono::seconds> backoff{std::chrono::seconds(30), std::chrono::seconds(120),
                                            std::chrono::seconds(300)};
  // Circuit breaker: over the host's last breaker_window completions (at least
  // kBreakerMinSamples of them), an error share above breaker_error_rate pauses the host for
  // breaker_cooldown; then one probe decides (success closes, error reopens).
  // Defaults: 20 completions, 0.2, 60 s.
  size_t breaker_window = 20;
  double breaker_error_rate = 0.2;
  std::chrono::seconds breaker_cooldown{60};
  // Number of priority classes (1..256; the persistent queue key has one byte for it); 0 is
  // served first. Default: 16.
  int priority_classes = 16;
  // Ready hosts are served by the class of their best item (true, default) or purely by the
  // time they became ready (false).
  bool cross_host_priority = true;
};

// A host's circuit breaker, for persisting it (Frontier::Breaker / RestoreBreaker).
struct BreakerState {
  bool open = false;
  Clock::TimePoint open_until{};  // while open: paused until then
  uint32_t ring_pos = 0, ring_count = 0, ring_errors = 0;
  uint64_t ring_bits = 0;  // the last completions (1 = error), windows up to 64
  bool empty() const { return !open && ring_count == 0; }
};

struct Lease {
  uint64_t id = 0;
  UrlItem item;
};

enum class CompletionKind {
  kDone,       // final outcome reached (2xx/3xx/4xx, disallowed after a request...)
  kRetry,      // 5xx, 429, timeout, connection error: retry with backoff
  kRequeue,    // the slot served something else (robots.txt fetch): the item goes back to
               // the front of its host queue; the delay is charged
  kNoRequest,  // no request was made (e.g. robots disallowed it): no delay charged
  kPutBack,    // no request was made and the item is not done (the host's address was not
               // known yet): back to the front of its queue, no delay charged
};

struct Completion {
  CompletionKind kind = CompletionKind::kDone;
  std::optional<std::chrono::milliseconds> retry_after;  // from Retry-After (429/503)
  std::chrono::microseconds response_time{0};            // for the adaptive factor
  // How long before Complete() the request ended (its response's last byte arrived): the
  // host's delay counts from then. 0: it ended now.
  std::chrono::microseconds ended_ago{0};
  bool error = false;  // counts toward the circuit breaker (5xx/timeout/connection)
};

// Complete() returns kYes when a kRetry exhausted max_attempts: the item is dropped and the
// caller records the final outcome.
enum class GiveUp { kNo, kYes };

// The wait before retry number `failures` (1-based) of a URL or of a host's robots.txt:
// backoff[failures - 1], the last entry repeating; 0 when backoff is empty.
std::chrono::seconds RetryBackoff(const FrontierOptions& options, int failures);

// What is known about a URL when it is queued (docs/priority.md).
struct PriorityInputs {
  int depth = 0;                 // links followed from a seed
  bool seed = false;             // named by the operator
  double sitemap_priority = -1;  // a sitemap's <priority> (0..1); < 0: none (counts as 0.5)
  uint64_t inlinks = 0;          // links to it seen so far (estimated)
  double host_weight = 1.0;      // the operator's weight for its host (> 0)
};

// The priority score (higher is better; docs/priority.md):
//   score = host_weight * (0.4 D + 0.2 L + 0.2 S + 0.2 B)
//   D = 1 / (1 + depth)
//   L = min(1, log2(1 + inlinks) / 10)      (1023 in-links or more: 1)
//   S = sitemap <priority> clamped to [0, 1], 0.5 when absent
//   B = 1 for a seed, else 0
double PriorityScore(const PriorityInputs& in);
// The class of a score among `classes` (0 best): floor(-log2(score) * classes / 4), clamped
// to [0, classes - 1]; each halving of the score costs classes/4 classes, so 16 classes
// span scores from 1 down to 1/16. A score <= 0 (or NaN) gets the last class.
int PriorityClass(double score, int classes);
// PriorityClass(PriorityScore(in), classes).
int PriorityFor(const PriorityInputs& in, int classes);

class Frontier {
 public:
  // A circuit breaker needs this many completions in its window before it may open.
  static constexpr size_t kBreakerMinSamples = 5;

  // clock nullptr = SystemClock::Default(). Queues in memory.
  Frontier(FrontierOptions options, Clock* clock);
  // With a caller-supplied queue store (e.g. disk-backed).
  Frontier(FrontierOptions options, Clock* clock, std::unique_ptr<QueueStore> store);
  ~Frontier();
  Frontier(const Frontier&) = delete;
  Frontier& operator=(const Frontier&) = delete;

  // Appends to the host's queue (the caller did admission). Items of a skipped host are
  // kept queued but never leased: drain them with DrainHost.
  void Add(UrlItem item);
  // A URL of a host that is ready now (not busy, next_allowed <= now, not paused by the
  // breaker, not skipped, IP limit ok). The host stays busy until Complete(lease).
  std::optional<Lease> Next();
  // Earliest time Next() may return something without a Complete() in between; a time
  // <= now means "now". nullopt: nothing can become ready until a lease completes (or
  // nothing is queued at all; see Idle()).
  std::optional<Clock::TimePoint> NextWakeup() const;
  // Releases the host slot (see CompletionKind). A lease that is not outstanding is
  // ignored (logged) and returns kNo.
  GiveUp Complete(const Lease& lease, const Completion& completion);

  // From robots.txt. Replaces the host's previous Crawl-delay (the effective delay never
  // drops below default_delay). Above max_crawl_delay the host becomes skipped.
  void SetCrawlDelay(const std::string& host, std::chrono::milliseconds d);
  // Operator override (nullopt clears it). Raises the delay; never lowers it below the rest.
  void SetDelayOverride(const std::string& host, std::optional<std::chrono::milliseconds> d);
  // Restart: the queue store already holds queued items of `host` (a persistent store loaded
  // them); counts them and schedules the host.
  void AdoptStoredHost(const std::string& host);
  // Restart: the host may not be leased before `t` (its persisted next-allowed time, or a
  // full delay after the restart when a request may have been in flight). Only raises.
  void RestoreNextAllowed(const std::string& host, Clock::TimePoint t);
  // The address the host resolved to, for per_ip_limit ("" = unknown, no IP limit).
  void SetHostIp(const std::string& host, const std::string& ip);
  // A held host is not leased (its queue waits, e.g. for a DNS answer) until released.
  void SetHeld(const std::string& host, bool held);
  bool HostSkipped(const std::string& host) const;
  // Items of the host waiting in its queue or for a retry (not counting a lease).
  size_t QueuedFor(const std::string& host) const;
  // Removes every queued item of the host, waiting retries included (the caller records
  // their outcomes). A lease in flight is not affected.
  std::vector<UrlItem> DrainHost(const std::string& host);
  // The delay the host would be charged by a completion now (without Retry-After).
  std::chrono::microseconds HostDelay(const std::string& host) const;

  // Bounded memory (docs/architecture.md §1.5). True when the host has no work: nothing
  // queued, no retry waiting, no lease out (also for a host the frontier does not know).
  bool HostIdle(const std::string& host) const;
  // Drops an idle host's state (its slot is reused; the caller persisted what it needs:
  // next-allowed time, Crawl-delay, breaker). False, and nothing changes, when it has work.
  bool Forget(const std::string& host);
  // The host's circuit breaker (windows above 64 keep only the open state), and its
  // restore when the host comes back.
  BreakerState Breaker(const std::string& host) const;
  void RestoreBreaker(const std::string& host, const BreakerState& b);
  size_t hosts_resident() const { return host_ids_.size(); }  // hosts with state in RAM

  // Stats.
  size_t queued() const { return queued_; }        // items in host queues
  size_t in_flight() const { return in_flight_; }  // outstanding leases
  size_t hosts() const;                            // hosts with queued/waiting/leased work
  size_t hosts_ready() const;                      // hosts Next() could serve now
  size_t retries_pending() const { return retries_pending_; }  // retries waiting for backoff
  size_t hosts_paused() const;                                 // hosts whose breaker is open
  bool Idle() const { return queued_ == 0 && in_flight_ == 0 && retries_pending_ == 0; }

 private:
  struct Host;
  // The hosts of one host name share one politeness slot: one lease out at a time, and the
  // latest next-allowed time any of them set holds for all.
  struct NameSlot {
    size_t hosts = 0;                 // resident hosts of the name
    bool busy = false;                // a lease of one of them is out
    Clock::TimePoint next_allowed{};  // the latest next-allowed time of its hosts
    std::vector<HostId> waiters;      // hosts that came up while the name was busy
  };
  struct HeapEntry {
    Clock::TimePoint ready;
    HostId id;
    uint64_t generation;
    bool operator>(const HeapEntry& o) const { return ready > o.ready; }
  };
  // A host whose ready time has passed (cross_host_priority): best class first, then the
  // earlier ready time, then the lower id (a strict order: deterministic).
  struct ReadyEntry {
    int cls;
    Clock::TimePoint ready;
    HostId id;
    uint64_t generation;
    bool operator>(const ReadyEntry& o) const {
      if (cls != o.cls) return cls > o.cls;
      if (ready != o.ready) return ready > o.ready;
      return id > o.id;
    }
  };

  Host& HostFor(const std::string& name);
  const Host* FindHost(const std::string& name) const;
  // When the host can next be leased, ignoring the IP limit; nullopt if it cannot without
  // a Complete() or an Add().
  std::optional<Clock::TimePoint> ReadyTime(const Host& h) const;
  void Reschedule(Host& h);
  bool IpFull(const Host& h) const;
  void WakeIpWaiters(const std::string& ip);
  // The slot of a host key's name (created with its first host).
  NameSlot& SlotFor(const std::string& host);
  // A host of the slot completed: the hosts that waited for it are scheduled again.
  void WakeNameWaiters(NameSlot& slot);
  // Drops slots without resident hosts whose next-allowed time has passed.
  void SweepNameSlots();
  std::chrono::microseconds DelayFor(const Host& h,
                                     std::optional<std::chrono::milliseconds> retry_after) const;
  void RecordBreaker(Host& h, bool error, Clock::TimePoint now);
  void PopStale() const;
  // Moves the valid heap entries whose time has come into ready_ with their class.
  void PromoteReady(Clock::TimePoint now);
  // The class of the host's best item: queued, or a retry due by `now`; -1 if none.
  int BestClass(const Host& h, Clock::TimePoint now) const;
  // per_ip_gap: the time before which the host may not be leased because another host of
  // its IP was leased less than per_ip_gap ago; nullopt when it may be leased now.
  std::optional<Clock::TimePoint> IpGapUntil(const Host& h, Clock::TimePoint now) const;

  FrontierOptions options_;
  Clock* clock_;
  std::unique_ptr<QueueStore> store_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::unordered_map<std::string, HostId> host_ids_;
  std::vector<HostId> free_ids_;  // slots of forgotten hosts, reused by HostFor
  // Min-heap on ready time; mutable so const NextWakeup() can drop stale tops.
  mutable std::vector<HeapEntry> heap_;
  // Min-heap of hosts ready now, by class (cross_host_priority only); stale entries are
  // skipped by generation like heap_'s.
  mutable std::vector<ReadyEntry> ready_;
  // per_ip_gap: when the last lease of each IP started.
  std::unordered_map<std::string, Clock::TimePoint> ip_last_start_;
  std::unordered_map<std::string, size_t> ip_in_flight_;
  std::unordered_map<std::string, std::deque<HostId>> ip_waiters_;  // FIFO per IP
  // By host name (node-stable: hosts point to their slot). A slot outlives its last host
  // while its next-allowed time is ahead, so a host of the name that comes back waits too.
  std::unordered_map<std::string, NameSlot> names_;
  uint64_t next_lease_id_ = 1;
  size_t queued_ = 0;
  size_t in_flight_ = 0;
  size_t retries_pending_ = 0;

 public:
  // Admin API (docs/operating.md). Hosts with work (queued, waiting for a retry or leased)
  // by state, in one pass over the hosts: a lease out; ready now; held (SetHeld: a DNS
  // lookup or an operator block); paused by an open breaker; waiting out a delay.
  struct HostStates {
    size_t active = 0, ready = 0, waiting = 0, held = 0, paused = 0;
  };
  HostStates CountHostStates() const;
  // The frontier has state for the host (resident).
  bool KnowsHost(const std::string& host) const { return FindHost(host) != nullptr; }
};

}  // namespace harvest::frontier
