// Frontier: host scheduling, leases, delays, retries and the circuit breaker.
#include "frontier/frontier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "base/host_key.h"

namespace harvest::frontier {

using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {
// The breaker counters are 32-bit: a window beyond this (a misconfiguration; it would cost
// as many bytes per host) is clamped.
constexpr size_t kMaxBreakerWindow = size_t{1} << 20;
}  // namespace

// Per-host state. A crawl of millions of hosts keeps one of these per host, so the fields
// most hosts never use (IP limit, Crawl-delay, overrides, adaptive timing, waiting retries,
// an open breaker, a breaker window above 64) live in a lazily allocated Extra (~56 bytes
// per host instead of ~300; docs/benchmarks.md, "Durable frontier at scale").
struct Frontier::Host {
  // Retries waiting for their backoff: a min-heap on (not_before, seq).
  struct Retry {
    Clock::TimePoint not_before;
    uint64_t seq;
    UrlItem item;
    bool operator>(const Retry& o) const {
      return not_before != o.not_before ? not_before > o.not_before : seq > o.seq;
    }
  };
  struct Extra {
    std::string lease_ip;  // the IP charged for the outstanding lease
    std::string ip;
    std::optional<milliseconds> crawl_delay;
    std::optional<milliseconds> override_delay;
    microseconds last_response_time{0};  // kept only when adaptive_factor > 0
    size_t adopted = 0;                  // items a persistent store held at start (AdoptStoredHost)
    std::vector<Retry> retries;
    uint64_t retry_seq = 0;
    Clock::TimePoint open_until{};  // breaker open: paused until then
    std::vector<uint8_t> ring;      // breaker ring when the window exceeds 64
  };
  static const Extra kNoExtra;

  const std::string* name_ptr = nullptr;  // the key in host_ids_ (node keys are stable)
  NameSlot* slot = nullptr;               // its host name's (names_)
  HostId id = 0;
  // Circuit breaker: ring of the last completions (1 = error): bits of ring_bits, or
  // extra->ring when breaker_window > 64.
  uint32_t ring_pos = 0;
  uint32_t ring_count = 0;
  uint32_t ring_errors = 0;
  uint64_t ring_bits = 0;
  bool busy = false;
  bool skipped = false;
  bool breaker_open = false;  // paused until open_until; then the next completion decides
  bool held = false;          // SetHeld: not leased until released
  uint64_t lease_id = 0;
  // Earliest start of the next request: end of the last request + its delay.
  Clock::TimePoint next_allowed{};
  // Bumped on every change of schedulability: heap and IP-waiter entries carrying an older
  // generation are stale.
  uint64_t generation = 0;
  std::unique_ptr<Extra> extra;

  const std::string& name() const { return *name_ptr; }
  const Extra& x() const { return extra ? *extra : kNoExtra; }
  Extra& mx() {
    if (!extra) extra = std::make_unique<Extra>();
    return *extra;
  }
  bool has_retries() const { return extra && !extra->retries.empty(); }
  const std::string& ip() const { return x().ip; }
};

const Frontier::Host::Extra Frontier::Host::kNoExtra{};

std::chrono::seconds RetryBackoff(const FrontierOptions& options, int failures) {
  if (options.backoff.empty() || failures < 1) return std::chrono::seconds(0);
  const size_t n = std::min<size_t>(static_cast<size_t>(failures) - 1, options.backoff.size() - 1);
  return options.backoff[n];
}

double PriorityScore(const PriorityInputs& in) {
  const double d = 1.0 / (1.0 + std::max(in.depth, 0));
  const double l = std::min(1.0, std::log2(1.0 + static_cast<double>(in.inlinks)) / 10.0);
  const double s = in.sitemap_priority < 0 ? 0.5 : std::min(in.sitemap_priority, 1.0);
  const double b = in.seed ? 1.0 : 0.0;
  const double w = in.host_weight > 0 ? in.host_weight : 0.0;
  return w * (0.4 * d + 0.2 * l + 0.2 * s + 0.2 * b);
}

int PriorityClass(double score, int classes) {
  classes = std::max(classes, 1);
  if (!(score > 0)) return classes - 1;  // also NaN
  if (score >= 1) return 0;
  const double c = std::floor(-std::log2(score) * classes / 4.0);
  return c >= classes - 1 ? classes - 1 : static_cast<int>(c);
}

int PriorityFor(const PriorityInputs& in, int classes) {
  return PriorityClass(PriorityScore(in), classes);
}

Frontier::Frontier(FrontierOptions options, Clock* clock)
    : Frontier(options, clock, NewMemoryQueueStore(options.priority_classes)) {}

Frontier::Frontier(FrontierOptions options, Clock* clock, std::unique_ptr<QueueStore> store)
    : options_(std::move(options)),
      clock_(clock != nullptr ? clock : SystemClock::Default()),
      store_(std::move(store)) {
  options_.priority_classes = std::clamp(options_.priority_classes, 1, 256);
  options_.max_attempts = std::max(options_.max_attempts, 1);
}

Frontier::~Frontier() = default;

Frontier::Host& Frontier::HostFor(const std::string& name) {
  const HostId slot = free_ids_.empty() ? static_cast<HostId>(hosts_.size()) : free_ids_.back();
  auto [it, inserted] = host_ids_.try_emplace(name, slot);
  if (inserted) {
    if (slot == hosts_.size()) {
      hosts_.push_back(std::make_unique<Host>());
    } else {
      free_ids_.pop_back();
    }
    Host& h = *hosts_[slot];
    h.name_ptr = &it->first;
    h.id = slot;
    h.slot = &SlotFor(name);
    ++h.slot->hosts;
    store_->RegisterHost(h.id, name);
  }
  return *hosts_[it->second];
}

bool Frontier::HostIdle(const std::string& name) const {
  const Host* h = FindHost(name);
  return h == nullptr || (!h->busy && store_->Size(h->id) == 0 && !h->has_retries());
}

bool Frontier::Forget(const std::string& name) {
  auto it = host_ids_.find(name);
  if (it == host_ids_.end()) return true;
  Host& h = *hosts_[it->second];
  if (h.busy || store_->Size(h.id) > 0 || h.has_retries()) return false;
  const HostId slot = h.id;
  // The slot keeps its generation, one higher than any entry of the old host carries, so a
  // stale heap or IP-waiter entry never matches the host that reuses the slot.
  const uint64_t generation = h.generation + 1;
  if (h.slot != nullptr) --h.slot->hosts;
  h = Host{};
  h.id = slot;
  h.generation = generation;
  store_->UnregisterHost(slot);
  host_ids_.erase(it);
  free_ids_.push_back(slot);
  if (names_.size() > 2 * host_ids_.size() + 1024) SweepNameSlots();
  return true;
}

Frontier::NameSlot& Frontier::SlotFor(const std::string& host) {
  const std::string_view name = NameOfHostKey(host);
  auto it = names_.find(std::string(name));  // heterogeneous lookup needs C++20 hashes
  if (it == names_.end()) it = names_.try_emplace(std::string(name)).first;
  return it->second;
}

void Frontier::WakeNameWaiters(NameSlot& slot) {
  if (slot.waiters.empty()) return;
  std::vector<HostId> waiters;
  waiters.swap(slot.waiters);
  for (HostId id : waiters) {
    Host& h = *hosts_[id];
    if (h.slot == &slot && !h.busy) Reschedule(h);  // else forgotten or leased since
  }
}

void Frontier::SweepNameSlots() {
  const Clock::TimePoint now = clock_->Now();
  std::erase_if(names_, [now](const auto& entry) {
    const NameSlot& s = entry.second;
    return s.hosts == 0 && !s.busy && s.next_allowed <= now;
  });
}

BreakerState Frontier::Breaker(const std::string& name) const {
  const Host* h = FindHost(name);
  if (h == nullptr) return {};
  return {.open = h->breaker_open,
          .open_until = h->x().open_until,
          .ring_pos = h->ring_pos,
          .ring_count = h->ring_count,
          .ring_errors = h->ring_errors,
          .ring_bits = h->ring_bits};
}

void Frontier::RestoreBreaker(const std::string& name, const BreakerState& b) {
  Host& h = HostFor(name);
  const size_t window = std::min<size_t>(options_.breaker_window, kMaxBreakerWindow);
  if (window <= 64 && b.ring_pos < window && b.ring_count <= window &&
      b.ring_errors <= b.ring_count) {
    h.ring_pos = b.ring_pos;
    h.ring_count = b.ring_count;
    h.ring_errors = b.ring_errors;
    h.ring_bits = b.ring_bits;
  }
  if (b.open) {
    h.breaker_open = true;
    h.mx().open_until = b.open_until;
  }
  if (!h.busy) Reschedule(h);
}

const Frontier::Host* Frontier::FindHost(const std::string& name) const {
  auto it = host_ids_.find(name);
  return it == host_ids_.end() ? nullptr : hosts_[it->second].get();
}

std::optional<Clock::TimePoint> Frontier::ReadyTime(const Host& h) const {
  if (h.busy || h.skipped || h.held) return std::nullopt;
  Clock::TimePoint t = h.next_allowed;
  if (store_->Size(h.id) == 0) {
    if (!h.has_retries()) return std::nullopt;
    t = std::max(t, h.extra->retries.front().not_before);
  }
  if (h.breaker_open) t = std::max(t, h.x().open_until);
  if (h.slot != nullptr) t = std::max(t, h.slot->next_allowed);
  return t;
}

void Frontier::Reschedule(Host& h) {
  ++h.generation;
  if (auto t = ReadyTime(h)) {
    heap_.push_back({*t, h.id, h.generation});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  // Stale entries drain as time passes; rebuild if they pile up (many changes per host).
  if (heap_.size() > 4 * hosts_.size() + 1024) {
    std::erase_if(heap_,
                  [this](const HeapEntry& e) { return e.generation != hosts_[e.id]->generation; });
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  if (ready_.size() > 2 * hosts_.size() + 1024) {
    std::erase_if(ready_,
                  [this](const ReadyEntry& e) { return e.generation != hosts_[e.id]->generation; });
    std::make_heap(ready_.begin(), ready_.end(), std::greater<>());
  }
}

int Frontier::BestClass(const Host& h, Clock::TimePoint now) const {
  int best = store_->BestClass(h.id);
  if (h.has_retries()) {
    for (const Host::Retry& r : h.extra->retries) {
      if (r.not_before <= now && (best < 0 || r.item.priority < best)) best = r.item.priority;
    }
  }
  return best;
}

std::optional<Clock::TimePoint> Frontier::IpGapUntil(const Host& h, Clock::TimePoint now) const {
  if (options_.per_ip_limit == 0 || options_.per_ip_gap.count() <= 0 || h.ip().empty()) {
    return std::nullopt;
  }
  auto it = ip_last_start_.find(h.ip());
  if (it == ip_last_start_.end()) return std::nullopt;
  const Clock::TimePoint until = it->second + options_.per_ip_gap;
  if (until <= now) return std::nullopt;
  return until;
}

void Frontier::PromoteReady(Clock::TimePoint now) {
  while (!heap_.empty() && heap_.front().ready <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    const Host& h = *hosts_[e.id];
    if (e.generation != h.generation) continue;  // stale
    const int cls = BestClass(h, now);
    ready_.push_back({cls < 0 ? options_.priority_classes : cls, e.ready, e.id, e.generation});
    std::push_heap(ready_.begin(), ready_.end(), std::greater<>());
  }
}

bool Frontier::IpFull(const Host& h) const {
  if (options_.per_ip_limit == 0 || h.ip().empty()) return false;
  auto it = ip_in_flight_.find(h.ip());
  return it != ip_in_flight_.end() && it->second >= options_.per_ip_limit;
}

void Frontier::WakeIpWaiters(const std::string& ip) {
  auto it = ip_waiters_.find(ip);
  if (it == ip_waiters_.end()) return;
  auto& waiters = it->second;
  // Wake the oldest still-valid waiter: one slot was freed. A woken host that loses the
  // race for the slot parks again and is woken by the next completion on this IP.
  while (!waiters.empty()) {
    const HostId id = waiters.front();
    waiters.pop_front();
    Host& h = *hosts_[id];
    if (h.busy || h.ip() != ip) continue;
    Reschedule(h);
    if (ReadyTime(h)) break;
  }
  if (waiters.empty()) ip_waiters_.erase(it);
}

void Frontier::Add(UrlItem item) {
  item.priority = std::clamp(item.priority, 0, options_.priority_classes - 1);
  Host& h = HostFor(item.host);
  const bool was_empty = store_->Size(h.id) == 0;
  // A better class than the host's best so far moves the host up among the ready hosts.
  const bool better = options_.cross_host_priority && !was_empty && !h.busy &&
                      item.priority < store_->BestClass(h.id);
  store_->Push(h.id, std::move(item), /*front=*/false);
  ++queued_;
  if ((was_empty || better) && !h.busy) Reschedule(h);
}

std::optional<Lease> Frontier::Next() {
  const Clock::TimePoint now = clock_->Now();
  for (;;) {
    HeapEntry e;
    if (options_.cross_host_priority) {
      PromoteReady(now);
      if (ready_.empty()) return std::nullopt;
      std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
      e = {ready_.back().ready, ready_.back().id, ready_.back().generation};
      ready_.pop_back();
    } else {
      if (heap_.empty() || heap_.front().ready > now) return std::nullopt;
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      e = heap_.back();
      heap_.pop_back();
    }
    Host& h = *hosts_[e.id];
    if (e.generation != h.generation) continue;  // stale
    if (h.slot->busy) {
      // Another host of its name has a lease out: it comes up again once that completes.
      h.slot->waiters.push_back(h.id);
      continue;
    }
    if (h.slot->next_allowed > now) {
      // Another host of its name completed since this entry was made: wait for its delay
      // (the entry stays valid: nothing about the host changed).
      heap_.push_back({h.slot->next_allowed, h.id, h.generation});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      continue;
    }
    if (IpFull(h)) {
      ip_waiters_[h.ip()].push_back(h.id);
      continue;
    }
    if (std::optional<Clock::TimePoint> until = IpGapUntil(h, now)) {
      // Another host of this IP started less than per_ip_gap ago: wait for the gap's end
      // (the entry stays valid: nothing about the host changed).
      heap_.push_back({*until, h.id, h.generation});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      continue;
    }
    Lease lease;
    if (h.has_retries() && h.extra->retries.front().not_before <= now) {
      auto& retries = h.extra->retries;
      std::pop_heap(retries.begin(), retries.end(), std::greater<>());
      lease.item = std::move(retries.back().item);
      retries.pop_back();
      --retries_pending_;
    } else {
      auto item = store_->Pop(h.id);
      if (!item) continue;  // cannot happen: ReadyTime saw a queued item
      lease.item = std::move(*item);
      --queued_;
    }
    h.busy = true;
    h.slot->busy = true;
    ++h.generation;
    h.lease_id = lease.id = next_lease_id_++;
    if (options_.per_ip_limit > 0 && !h.ip().empty()) {
      h.extra->lease_ip = h.extra->ip;
      ++ip_in_flight_[h.extra->lease_ip];
    } else if (h.extra) {
      h.extra->lease_ip.clear();
    }
    if (options_.per_ip_limit > 0 && options_.per_ip_gap.count() > 0 && !h.ip().empty()) {
      ip_last_start_[h.ip()] = now;
    }
    ++in_flight_;
    return lease;
  }
}

void Frontier::PopStale() const {
  while (!heap_.empty() && heap_.front().generation != hosts_[heap_.front().id]->generation) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }
}

std::optional<Clock::TimePoint> Frontier::NextWakeup() const {
  PopStale();
  while (!ready_.empty() && ready_.front().generation != hosts_[ready_.front().id]->generation) {
    std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
    ready_.pop_back();
  }
  // A ready host became ready in the past: "now".
  std::optional<Clock::TimePoint> t;
  if (!ready_.empty()) t = ready_.front().ready;
  if (!heap_.empty() && (!t || heap_.front().ready < *t)) t = heap_.front().ready;
  return t;
}

microseconds Frontier::DelayFor(const Host& h, std::optional<milliseconds> retry_after) const {
  microseconds d = options_.default_delay;
  const Host::Extra& x = h.x();
  if (x.crawl_delay) d = std::max<microseconds>(d, *x.crawl_delay);
  if (retry_after) d = std::max<microseconds>(d, *retry_after);
  if (x.override_delay) d = std::max<microseconds>(d, *x.override_delay);
  if (options_.adaptive_factor > 0) {
    const auto adaptive = microseconds(static_cast<int64_t>(std::llround(
        options_.adaptive_factor * static_cast<double>(x.last_response_time.count()))));
    d = std::max(d, adaptive);
  }
  return d;
}

void Frontier::RecordBreaker(Host& h, bool error, Clock::TimePoint now) {
  if (options_.breaker_window == 0) return;
  if (h.breaker_open) {  // this completion was the probe
    if (error) {
      h.mx().open_until = now + options_.breaker_cooldown;
      spdlog::info("frontier: {} probe failed, paused for {} s", h.name(),
                   options_.breaker_cooldown.count());
    } else {
      h.breaker_open = false;
      h.ring_bits = 0;
      if (h.extra) h.extra->ring.clear();
      h.ring_pos = h.ring_count = h.ring_errors = 0;
      spdlog::info("frontier: {} probe succeeded, breaker closed", h.name());
    }
    return;
  }
  // The window is kept in ring_bits when it fits (every host has one), else in a vector.
  const size_t window = std::min<size_t>(options_.breaker_window, kMaxBreakerWindow);
  const bool bits = window <= 64;
  if (!bits && h.mx().ring.empty()) h.extra->ring.assign(window, 0);
  auto get = [&](size_t i) -> unsigned {
    return bits ? static_cast<unsigned>((h.ring_bits >> i) & 1) : h.extra->ring[i];
  };
  auto set = [&](size_t i, unsigned v) {
    if (bits) {
      h.ring_bits = (h.ring_bits & ~(uint64_t{1} << i)) | (uint64_t{v} << i);
    } else {
      h.extra->ring[i] = static_cast<uint8_t>(v);
    }
  };
  if (h.ring_count == window) {
    h.ring_errors -= get(h.ring_pos);
  } else {
    ++h.ring_count;
  }
  set(h.ring_pos, error ? 1 : 0);
  h.ring_errors += get(h.ring_pos);
  h.ring_pos = static_cast<uint32_t>((h.ring_pos + 1) % window);
  const size_t min_samples = std::min(kBreakerMinSamples, window);
  if (h.ring_count >= min_samples &&
      static_cast<double>(h.ring_errors) > options_.breaker_error_rate * h.ring_count) {
    h.breaker_open = true;
    h.mx().open_until = now + options_.breaker_cooldown;
    spdlog::warn("frontier: {} breaker open ({} errors in {} completions), paused for {} s",
                 h.name(), h.ring_errors, h.ring_count, options_.breaker_cooldown.count());
  }
}

GiveUp Frontier::Complete(const Lease& lease, const Completion& c) {
  auto it = host_ids_.find(lease.item.host);
  Host* hp = it == host_ids_.end() ? nullptr : hosts_[it->second].get();
  if (hp == nullptr || !hp->busy || hp->lease_id != lease.id) {
    spdlog::error("frontier: Complete for lease {} of {} that is not outstanding (ignored)",
                  lease.id, lease.item.host);
    return GiveUp::kNo;
  }
  Host& h = *hp;
  const Clock::TimePoint now = clock_->Now();
  h.busy = false;
  h.slot->busy = false;
  --in_flight_;
  std::string ip;
  if (h.extra) {
    ip = std::move(h.extra->lease_ip);
    h.extra->lease_ip.clear();
  }
  if (!ip.empty() && --ip_in_flight_[ip] == 0) ip_in_flight_.erase(ip);

  GiveUp give_up = GiveUp::kNo;
  if (c.kind != CompletionKind::kNoRequest && c.kind != CompletionKind::kPutBack) {
    // Only the adaptive delay reads it: other hosts need no Extra for it.
    if (c.response_time.count() > 0 && options_.adaptive_factor > 0) {
      h.mx().last_response_time = c.response_time;
    }
    h.next_allowed = now - std::max(c.ended_ago, microseconds(0)) + DelayFor(h, c.retry_after);
    h.slot->next_allowed = std::max(h.slot->next_allowed, h.next_allowed);
    RecordBreaker(h, c.error, now);
  }
  if (c.kind == CompletionKind::kRetry) {
    UrlItem item = lease.item;
    ++item.attempts;
    if (item.attempts >= options_.max_attempts) {
      give_up = GiveUp::kYes;
    } else {
      microseconds wait = RetryBackoff(options_, item.attempts);
      if (c.retry_after) wait = std::max<microseconds>(wait, *c.retry_after);
      Host::Extra& x = h.mx();
      x.retries.push_back({now + wait, x.retry_seq++, std::move(item)});
      std::push_heap(x.retries.begin(), x.retries.end(), std::greater<>());
      ++retries_pending_;
    }
  } else if (c.kind == CompletionKind::kRequeue || c.kind == CompletionKind::kPutBack) {
    UrlItem item = lease.item;
    item.priority = std::clamp(item.priority, 0, options_.priority_classes - 1);
    store_->Push(h.id, std::move(item), /*front=*/true);
    ++queued_;
  }
  Reschedule(h);
  WakeNameWaiters(*h.slot);
  if (!ip.empty()) WakeIpWaiters(ip);
  return give_up;
}

void Frontier::SetCrawlDelay(const std::string& host, milliseconds d) {
  Host& h = HostFor(host);
  h.mx().crawl_delay = d;
  const bool skip = d > options_.max_crawl_delay;
  if (skip && !h.skipped) {
    spdlog::warn("frontier: {} asks for Crawl-delay {} ms > max {} ms: host skipped", host,
                 d.count(), options_.max_crawl_delay.count());
  }
  if (skip != h.skipped) {
    h.skipped = skip;
    Reschedule(h);
  }
}

void Frontier::AdoptStoredHost(const std::string& host) {
  Host& h = HostFor(host);
  // Items already counted (adopted twice) are not counted again.
  const size_t stored = store_->Size(h.id);
  if (stored > h.x().adopted) {
    queued_ += stored - h.x().adopted;
    h.mx().adopted = stored;
  }
  if (!h.busy) Reschedule(h);
}

void Frontier::RestoreNextAllowed(const std::string& host, Clock::TimePoint t) {
  Host& h = HostFor(host);
  // The name's other hosts wait for it too: the request it recorded may have gone to them.
  h.slot->next_allowed = std::max(h.slot->next_allowed, t);
  if (t <= h.next_allowed) return;
  h.next_allowed = t;
  if (!h.busy) Reschedule(h);
}

void Frontier::SetDelayOverride(const std::string& host, std::optional<milliseconds> d) {
  Host& h = HostFor(host);
  if (d || h.extra) h.mx().override_delay = d;
}

void Frontier::SetHostIp(const std::string& host, const std::string& ip) {
  Host& h = HostFor(host);
  if (h.ip() == ip) return;
  h.mx().ip = ip;
  if (!h.busy) Reschedule(h);
}

void Frontier::SetHeld(const std::string& host, bool held) {
  Host& h = HostFor(host);
  if (h.held == held) return;
  h.held = held;
  if (!h.busy) Reschedule(h);
}

size_t Frontier::QueuedFor(const std::string& host) const {
  const Host* h = FindHost(host);
  if (h == nullptr) return 0;
  return store_->Size(h->id) + (h->extra ? h->extra->retries.size() : 0);
}

bool Frontier::HostSkipped(const std::string& host) const {
  const Host* h = FindHost(host);
  return h != nullptr && h->skipped;
}

std::vector<UrlItem> Frontier::DrainHost(const std::string& host) {
  auto it = host_ids_.find(host);
  if (it == host_ids_.end()) return {};
  Host& h = *hosts_[it->second];
  std::vector<UrlItem> items = store_->Drain(h.id);
  queued_ -= items.size();
  if (h.extra) {
    auto& retries = h.extra->retries;
    std::sort(retries.begin(), retries.end(),
              [](const Host::Retry& a, const Host::Retry& b) { return b > a; });
    for (auto& r : retries) items.push_back(std::move(r.item));
    retries_pending_ -= retries.size();
    retries.clear();
  }
  Reschedule(h);
  return items;
}

microseconds Frontier::HostDelay(const std::string& host) const {
  const Host* h = FindHost(host);
  if (h == nullptr) return options_.default_delay;
  return DelayFor(*h, std::nullopt);
}

size_t Frontier::hosts() const {
  size_t n = 0;
  for (const auto& h : hosts_) {
    n += h->busy || store_->Size(h->id) > 0 || h->has_retries();
  }
  return n;
}

size_t Frontier::hosts_ready() const {
  const Clock::TimePoint now = clock_->Now();
  size_t n = 0;
  for (const auto& h : hosts_) {
    auto t = ReadyTime(*h);
    n += t && *t <= now && !h->slot->busy && !IpFull(*h) && !IpGapUntil(*h, now);
  }
  return n;
}

size_t Frontier::hosts_paused() const {
  const Clock::TimePoint now = clock_->Now();
  size_t n = 0;
  for (const auto& h : hosts_) n += h->breaker_open && h->x().open_until > now;
  return n;
}

Frontier::HostStates Frontier::CountHostStates() const {
  const Clock::TimePoint now = clock_->Now();
  HostStates n;
  for (const auto& h : hosts_) {
    if (h->busy) {
      ++n.active;
      continue;
    }
    if (store_->Size(h->id) == 0 && !h->has_retries()) continue;  // no work
    if (h->held) {
      ++n.held;
    } else if (h->breaker_open && h->x().open_until > now) {
      ++n.paused;
    } else if (auto t = ReadyTime(*h);
               t && *t <= now && !h->slot->busy && !IpFull(*h) && !IpGapUntil(*h, now)) {
      ++n.ready;
    } else {
      ++n.waiting;
    }
  }
  return n;
}

}  // namespace harvest::frontier
