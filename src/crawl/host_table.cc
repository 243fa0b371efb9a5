#include "crawl/host_table.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace harvest::crawl {

HostTable::HostTable(Options options, Clock* clock, state::StateDb* db,
                     frontier::Frontier* frontier, RobotsGate* robots, SharedCrawl* shared)
    : options_(options),
      clock_(clock),
      db_(db),
      frontier_(frontier),
      robots_(robots),
      shared_(shared),
      upgrades_(
          [&] {
            HttpsUpgrades::Options u = options.upgrades;
            u.resumed = options.resumed;
            return u;
          }(),
          clock, db, shared),
      run_start_(clock->Now()) {}

void HostTable::SetRunStart(Clock::TimePoint start) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  run_start_ = start;
}

bool HostTable::Contains(const std::string& name) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return hosts_.contains(name);
}

size_t HostTable::size() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return hosts_.size();
}

const std::unordered_map<std::string, HostTable::Host>& HostTable::hosts() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return hosts_;
}

void HostTable::NoteIp(const std::string& name, const std::string& ip) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (ip.empty()) return;
  Ensure(name).ip_known = true;
  frontier_->SetHostIp(name, ip);
}

void HostTable::LoadOverrides(
    const std::function<void(const std::string& host, double weight)>& on_weight) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  Status s = db_->ForEachHostOverride([&](const std::string& host, const state::HostOverride& o) {
    overrides_[host] = o;
    if (o.weight > 0) on_weight(host, o.weight);
  });
  if (!s.ok()) spdlog::error("admin: host overrides: {}", s.ToString());
  if (!overrides_.empty()) spdlog::info("{} host overrides restored", overrides_.size());
}

void HostTable::ApplyOverride(const std::string& name) {
  auto it = overrides_.find(name);
  if (it == overrides_.end()) return;
  const state::HostOverride& o = it->second;
  if (o.crawl_delay_ms >= 0) {
    frontier_->SetDelayOverride(name, std::chrono::milliseconds(o.crawl_delay_ms));
  }
  if (o.blocked) frontier_->SetHeld(name, true);
}

state::HostOverride& HostTable::Override(const std::string& name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return overrides_[name];
}

const state::HostOverride* HostTable::FindOverride(const std::string& name) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  auto it = overrides_.find(name);
  return it != overrides_.end() ? &it->second : nullptr;
}

void HostTable::SaveOverride(const std::string& name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  state::HostOverride& o = overrides_[name];
  db_->PutHostOverride(name, o);
  if (o.empty()) overrides_.erase(name);
}

bool HostTable::Blocked(const std::string& name) const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  auto it = overrides_.find(name);
  return it != overrides_.end() && it->second.blocked;
}

const std::unordered_map<std::string, state::HostOverride>& HostTable::overrides() const {
  HARVEST_ASSERT_ON_THREAD(thread_);
  return overrides_;
}

Clock::TimePoint HostTable::SteadyFromWall(int64_t wall_us) const {
  return clock_->Now() + std::chrono::microseconds(wall_us - clock_->WallMicros());
}

// A host met for the first time in this run, or again after an eviction, gets its state
// back from the crawl state. A brand-new host costs no read: only a resumed crawl, or a
// host the eviction filter may know, reads (docs/architecture.md §1.5).
HostTable::Host& HostTable::Ensure(const std::string& name) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  ++events_;
  auto [it, inserted] = hosts_.try_emplace(name);
  Host& host = it->second;
  if (!inserted) {
    lru_.splice(lru_.end(), lru_, host.lru);
    return host;
  }
  host.lru = lru_.insert(lru_.end(), &it->first);
  if (!overrides_.empty()) ApplyOverride(name);  // the operator's policy and block
  if (auto h = handed_over_.find(name); h != handed_over_.end()) {
    // Taken over from another worker of a shared crawl: its state, not this process's.
    const SharedCrawl::HostRecords& r = h->second.records;
    Restore(name, host, r.robots, r.breaker, r.politeness, SteadyFromWall(h->second.not_before_us));
    handed_over_.erase(h);
    return host;
  }
  const bool evicted = db_->MayHaveHostRecords(name);
  if (!options_.resumed && !evicted) return host;
  std::optional<state::RobotsRecord> robots = db_->GetRobots(name);
  std::optional<state::BreakerRecord> breaker = db_->GetBreaker(name);
  std::optional<state::HostPoliteness> p = db_->GetPoliteness(name);
  if (evicted && (robots || breaker || p)) ++stats_.reloaded;
  // A request to this host may have been in flight when the last run died: its end is
  // unknown but no later than now, so a full delay from the restart keeps it polite. The
  // persisted time covers longer waits (Retry-After, a long Crawl-delay) and, for a host
  // evicted in this run, its last request's end plus its delay.
  Restore(name, host, robots, breaker, p, Clock::TimePoint{});
  if (p) {
    frontier_->RestoreNextAllowed(name,
                                  std::max(SteadyFromWall(p->next_allowed_us),
                                           run_start_ + std::chrono::duration_cast<Clock::Duration>(
                                                            frontier_->HostDelay(name))));
  }
  return host;
}

void HostTable::Restore(const std::string& name, Host& host,
                        const std::optional<state::RobotsRecord>& robots,
                        const std::optional<state::BreakerRecord>& breaker,
                        const std::optional<state::HostPoliteness>& p,
                        Clock::TimePoint not_before) {
  if (robots) robots_->Restore(name, *robots);
  if (breaker) {
    const state::BreakerRecord& b = *breaker;
    frontier_->RestoreBreaker(name, {.open = b.open,
                                     .open_until = SteadyFromWall(b.open_until_us),
                                     .ring_pos = b.ring_pos,
                                     .ring_count = b.ring_count,
                                     .ring_errors = b.ring_errors,
                                     .ring_bits = b.ring_bits});
    host.breaker_saved = true;
    host.breaker_open = b.open;
    host.breaker_until = frontier_->Breaker(name).open_until;
  }
  if (p) {
    host.dead_reason = p->dead_reason;
    host.dead_detail = p->dead_detail;
    if (p->crawl_delay_ms >= 0) {
      host.crawl_delay_ms = p->crawl_delay_ms;
      frontier_->SetCrawlDelay(name, std::chrono::milliseconds(p->crawl_delay_ms));
    }
    not_before = std::max(not_before, SteadyFromWall(p->next_allowed_us));
  }
  if (p || not_before > clock_->Now()) frontier_->RestoreNextAllowed(name, not_before);  // a max
}

// A shared crawl's host taken over with its partition. Known here already (this worker held
// the partition before): what this process knows is older than the saved state, so the host
// leaves RAM and comes back with that state — unless it has work here, which cannot happen
// for a host of a partition just taken (a partition is given up only once its URLs are done
// here), and then it keeps its state and only the later next-allowed time.
void HostTable::HandOver(SharedCrawl::HostHandover h) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  if (h.records.upgrade) {
    // Kept by host name, not origin: nothing else comes with it.
    db_->PutUpgrade(h.host, *h.records.upgrade);
    upgrades_.HandOver(h.host, *h.records.upgrade);
    return;
  }
  if (auto it = hosts_.find(h.host); it != hosts_.end()) {
    if (!frontier_->HostIdle(h.host)) {
      Clock::TimePoint t = SteadyFromWall(h.not_before_us);
      if (const std::optional<state::HostPoliteness>& p = h.records.politeness) {
        t = std::max(t, SteadyFromWall(p->next_allowed_us));
      }
      frontier_->RestoreNextAllowed(h.host, t);  // only ever later
      return;
    }
    frontier_->Forget(h.host);
    robots_->Forget(h.host);
    lru_.erase(it->second.lru);
    hosts_.erase(it);
  }
  const SharedCrawl::HostRecords& r = h.records;
  const int64_t now = clock_->WallMicros();
  const bool binds =
      r.robots || r.breaker || h.not_before_us > now ||
      (r.politeness && (r.politeness->next_allowed_us > now || r.politeness->crawl_delay_ms >= 0 ||
                        !r.politeness->dead_reason.empty()));
  if (!binds) return;  // nothing to keep: the host starts afresh here
  // Also in the local state, where the host's next reload after an eviction reads it.
  if (r.robots) db_->PutRobots(h.host, *r.robots);
  if (r.breaker) db_->PutBreaker(h.host, *r.breaker);
  if (r.politeness) db_->PutPoliteness(h.host, *r.politeness);
  db_->NoteHostEvicted(h.host);
  std::string name = h.host;
  handed_over_.insert_or_assign(std::move(name), std::move(h));
}

void HostTable::PutShared(const std::string& name, const SharedCrawl::HostRecords& parts) {
  if (shared_ != nullptr) shared_->PutHost(name, parts);
}

void HostTable::SavePoliteness(const std::string& name,
                               std::optional<std::chrono::milliseconds> retry_after) {
  Host& host = Ensure(name);
  std::chrono::microseconds delay = frontier_->HostDelay(name);
  if (retry_after) delay = std::max<std::chrono::microseconds>(delay, *retry_after);
  const state::HostPoliteness p = PolitenessOf(host, clock_->WallMicros() + delay.count());
  // The local record is written when a restart needs it: a restart waits the host's full
  // delay from the restart (Ensure), which covers every request of the last run, so the
  // record's time matters only when it asks for more (Retry-After) or a field changed. A
  // completion that only moves the time on marks the record stale; Evict writes it when the
  // host leaves RAM, for its reload in this run (docs/architecture.md §1.5).
  if (!host.politeness_saved || retry_after || host.crawl_delay_ms != host.saved_crawl_delay_ms ||
      !host.dead_reason.empty()) {
    WritePoliteness(name, host, p);
  } else {
    host.politeness_stale = true;
  }
  PutShared(name, {.politeness = p});
  SaveBreaker(name, host, /*evicting=*/false);
}

state::HostPoliteness HostTable::PolitenessOf(const Host& host, int64_t next_allowed_us) {
  return {.next_allowed_us = next_allowed_us,
          .crawl_delay_ms = host.crawl_delay_ms,
          .dead_reason = host.dead_reason,
          .dead_detail = host.dead_detail};
}

void HostTable::WritePoliteness(const std::string& name, Host& host,
                                const state::HostPoliteness& p) {
  db_->PutPoliteness(name, p);
  host.politeness_saved = true;
  host.politeness_stale = false;
  host.saved_next_allowed_us = p.next_allowed_us;
  host.saved_crawl_delay_ms = p.crawl_delay_ms;
}

void HostTable::SaveBreaker(const std::string& name, Host& host, bool evicting) {
  const frontier::BreakerState b = frontier_->Breaker(name);
  if (evicting) {
    if (b.empty() && !host.breaker_saved) return;
  } else if (b.open == host.breaker_open && (!b.open || b.open_until == host.breaker_until)) {
    return;  // the open/closed state did not change (the ring is saved at eviction)
  }
  const int64_t until_us =
      b.open
          ? clock_->WallMicros() +
                std::chrono::duration_cast<std::chrono::microseconds>(b.open_until - clock_->Now())
                    .count()
          : 0;
  const state::BreakerRecord record{.open = b.open,
                                    .open_until_us = until_us,
                                    .ring_pos = b.ring_pos,
                                    .ring_count = b.ring_count,
                                    .ring_errors = b.ring_errors,
                                    .ring_bits = b.ring_bits};
  db_->PutBreaker(name, record);
  PutShared(name, {.breaker = record});
  host.breaker_saved = true;
  host.breaker_open = b.open;
  host.breaker_until = b.open_until;
}

void HostTable::Evict(size_t cap) {
  HARVEST_ASSERT_ON_THREAD(thread_);
  upgrades_.TrimCache();
  // Each host event pays for two looks at the oldest host, so a table full of hosts with
  // work costs O(1) per event, not a scan per call.
  size_t budget = 2 * events_ + 16;
  events_ = 0;
  while (hosts_.size() > cap && budget-- > 0 && !lru_.empty()) {
    const std::string& name = *lru_.front();
    if (!frontier_->HostIdle(name)) {
      lru_.splice(lru_.end(), lru_, lru_.begin());  // has work: not a candidate now
      continue;
    }
    auto it = hosts_.find(name);
    Host& host = it->second;
    if (host.politeness_stale) {
      // Idle: its last request ended before now, so now plus its delay is no earlier than
      // the time a reload must keep (nor than a longer wait the record holds).
      const std::chrono::microseconds delay = frontier_->HostDelay(name);
      const int64_t now_plus_delay = clock_->WallMicros() + delay.count();
      WritePoliteness(name, host,
                      PolitenessOf(host, std::max(host.saved_next_allowed_us, now_plus_delay)));
    }
    SaveBreaker(name, host, /*evicting=*/true);
    frontier_->Forget(name);
    robots_->Forget(name);
    db_->NoteHostEvicted(name);
    lru_.pop_front();
    hosts_.erase(it);
    ++stats_.evicted;
  }
  stats_.resident = hosts_.size();
  stats_.resident_peak = std::max<uint64_t>(stats_.resident_peak, hosts_.size());
}

}  // namespace harvest::crawl
