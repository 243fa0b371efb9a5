// Crawl state: opening, resuming after a stop or a kill -9, and what the I/O thread persists
// (docs/architecture.md §1.3; docs/recovery.md).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "crawl/crawler_impl.h"

namespace harvest::crawl {
namespace {

bool IsWarcFile(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.ends_with(".warc.gz") || name.ends_with(".warc");
}

// WARC files that a crash may have left torn or unindexed: the writer appends to one file
// at a time, so only the newest (and the one it may have been rotating away from) qualify.
constexpr size_t kWarcsToRecover = 2;

}  // namespace

Status Crawler::Impl::CheckOutDir() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path& out = opts_.out_dir;
  if (!fs::exists(out, ec)) return Status::Ok();
  if (!fs::is_directory(out, ec)) {
    return Status::InvalidArgument(out.string() + " exists and is not a directory");
  }
  const bool has_state = fs::exists(out / "state" / "CURRENT", ec);
  if (opts_.fresh) {
    return Status::InvalidArgument(
        out.string() + " already exists" +
        (has_state ? " and holds a crawl; run without --fresh to resume it" : "") +
        " (--fresh refuses an existing directory: choose a new --out)");
  }
  if (!has_state && !fs::is_empty(out, ec)) {
    return Status::InvalidArgument(out.string() +
                                   " is not empty and holds no crawl state (state/): choose a "
                                   "new or empty --out directory");
  }
  return Status::Ok();
}

Status Crawler::Impl::OpenState() {
  opts_.state.dir = opts_.out_dir / "state";
  Result<std::unique_ptr<state::StateDb>> db = state::StateDb::Open(opts_.state);
  if (!db.ok()) return db.status();
  db_ = std::move(*db);
  resumed_ = !db_->created();
  seen_ = std::make_unique<dedup::SeenSet>(opts_.seen, db_->seen());
  admission_ = std::make_unique<frontier::Admission>(opts_.scope, opts_.traps, seen_.get(), clock_);
  counter_store_ = std::make_unique<CounterStore>(db_.get(), &resumed_);
  admission_->SetCounterStore(counter_store_.get(), opts_.host_cache);
  frontier_ = std::make_unique<frontier::Frontier>(
      opts_.frontier, clock_, db_->NewQueueStore(opts_.frontier.priority_classes));
  return db_->status();
}

void Crawler::Impl::RecoverWarcs() {
  std::vector<std::filesystem::path> warcs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(opts_.out_dir, ec)) {
    if (e.is_regular_file() && IsWarcFile(e.path())) warcs.push_back(e.path());
  }
  std::sort(warcs.begin(), warcs.end());  // names carry a timestamp and serial
  const size_t first = warcs.size() > kWarcsToRecover ? warcs.size() - kWarcsToRecover : 0;
  for (size_t i = first; i < warcs.size(); ++i) {
    Result<store::RecoveryReport> r = store::RecoverWarc(warcs[i]);
    if (!r.ok()) {
      spdlog::error("recovery: {}: {} (left as is)", warcs[i].string(), r.status().ToString());
      continue;
    }
    stats_.recovered_bytes_cut += r->bytes_cut;
    stats_.recovered_cdxj_lines += r->cdxj_lines_added;
    uint64_t digests = 0;
    // Responses written but not yet flushed when the process died: their payloads count as
    // stored, so a re-fetch becomes a revisit.
    for (const store::RecoveredRecord& rec : r->unindexed) {
      if (rec.type != "response" || rec.payload_digest.empty()) continue;
      if (db_->FindDigest(rec.payload_digest)) continue;
      (void)db_->PutDigest(rec.payload_digest, {rec.target_uri, rec.date_us, rec.record_id});
      ++digests;
    }
    if (r->bytes_cut > 0 || r->cdxj_lines_added > 0 || digests > 0) {
      spdlog::warn(
          "recovery: {}: cut a torn tail of {} bytes, indexed {} records, restored {} "
          "payload digests",
          warcs[i].filename().string(), r->bytes_cut, r->cdxj_lines_added, digests);
    }
  }
}

void Crawler::Impl::RestoreState() {
  stats_.resumed = true;
  auto t0 = std::chrono::steady_clock::now();
  Status s = db_->ForEachSeen([this](uint64_t fp) {
    seen_->Preload(fp);
    ++stats_.resumed_seen;
  });
  if (!s.ok()) spdlog::error("recovery: {}", s.ToString());
  stats_.bloom_restore_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  started_ = clock_->Now();
  db_->ForEachLoadedHost([this](const std::string& host, size_t n) {
    frontier_->AdoptStoredHost(host);
    EnsureHost(host);
    stats_.resumed_queued += n;
  });
  spdlog::info(
      "resuming the crawl in {}: {} URLs queued or in flight over {} hosts, {} URLs "
      "seen (Bloom filter restored in {:.2f} s)",
      opts_.out_dir.string(), stats_.resumed_queued, hosts_.size(), stats_.resumed_seen,
      stats_.bloom_restore_s);
}

Clock::TimePoint Crawler::Impl::SteadyFromWall(int64_t wall_us) const {
  return clock_->Now() + std::chrono::microseconds(wall_us - WallNow());
}

// A host met for the first time in this run, or again after an eviction, gets its state
// back from the crawl state. A brand-new host costs no read: only a resumed crawl, or a
// host the eviction filter may know, reads (docs/architecture.md §1.5).
Crawler::Impl::HostState& Crawler::Impl::EnsureHost(const std::string& name) {
  ++host_events_;
  auto [it, inserted] = hosts_.try_emplace(name);
  HostState& host = it->second;
  if (!inserted) {
    lru_.splice(lru_.end(), lru_, host.lru);
    return host;
  }
  host.lru = lru_.insert(lru_.end(), &it->first);
  if (!overrides_.empty()) ApplyOverride(name);  // the operator's policy and block
  if (auto h = handed_over_.find(name); h != handed_over_.end()) {
    // Taken over from another worker of a shared crawl: its state, not this process's.
    const SharedCrawl::HostRecords& r = h->second.records;
    RestoreHost(name, host, r.robots, r.breaker, r.politeness,
                SteadyFromWall(h->second.not_before_us));
    handed_over_.erase(h);
    return host;
  }
  const bool evicted = db_->MayHaveHostRecords(name);
  if (!resumed_ && !evicted) return host;
  std::optional<state::RobotsRecord> robots = db_->GetRobots(name);
  std::optional<state::BreakerRecord> breaker = db_->GetBreaker(name);
  std::optional<state::HostPoliteness> p = db_->GetPoliteness(name);
  if (evicted && (robots || breaker || p)) ++stats_.hosts_reloaded;
  // A request to this host may have been in flight when the last run died: its end is
  // unknown but no later than now, so a full delay from the restart keeps it polite. The
  // persisted time covers longer waits (Retry-After, a long Crawl-delay) and, for a host
  // evicted in this run, its last request's end plus its delay.
  RestoreHost(name, host, robots, breaker, p, Clock::TimePoint{});
  if (p) {
    frontier_->RestoreNextAllowed(name,
                                  std::max(SteadyFromWall(p->next_allowed_us),
                                           started_ + std::chrono::duration_cast<Clock::Duration>(
                                                          frontier_->HostDelay(name))));
  }
  return host;
}

void Crawler::Impl::RestoreHost(const std::string& name, HostState& host,
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
void Crawler::Impl::HandOver(SharedCrawl::HostHandover h) {
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
  const int64_t now = WallNow();
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

void Crawler::Impl::PutSharedHost(const std::string& name, const SharedCrawl::HostRecords& parts) {
  if (opts_.shared != nullptr) opts_.shared->PutHost(name, parts);
}

void Crawler::Impl::SavePoliteness(const std::string& name,
                                   std::optional<std::chrono::milliseconds> retry_after) {
  HostState& host = EnsureHost(name);
  std::chrono::microseconds delay = frontier_->HostDelay(name);
  if (retry_after) delay = std::max<std::chrono::microseconds>(delay, *retry_after);
  const state::HostPoliteness p = PolitenessOf(host, WallNow() + delay.count());
  // The local record is written when a restart needs it: a restart waits the host's full
  // delay from the restart (EnsureHost), which covers every request of the last run, so the
  // record's time matters only when it asks for more (Retry-After) or a field changed. A
  // completion that only moves the time on marks the record stale; EvictHosts writes it
  // when the host leaves RAM, for its reload in this run (docs/architecture.md §1.5).
  if (!host.politeness_saved || retry_after || host.crawl_delay_ms != host.saved_crawl_delay_ms ||
      !host.dead_reason.empty()) {
    WritePoliteness(name, host, p);
  } else {
    host.politeness_stale = true;
  }
  PutSharedHost(name, {.politeness = p});
  SaveBreaker(name, host, /*evicting=*/false);
}

state::HostPoliteness Crawler::Impl::PolitenessOf(const HostState& host, int64_t next_allowed_us) {
  return {.next_allowed_us = next_allowed_us,
          .crawl_delay_ms = host.crawl_delay_ms,
          .dead_reason = host.dead_reason,
          .dead_detail = host.dead_detail};
}

void Crawler::Impl::WritePoliteness(const std::string& name, HostState& host,
                                    const state::HostPoliteness& p) {
  db_->PutPoliteness(name, p);
  host.politeness_saved = true;
  host.politeness_stale = false;
  host.saved_next_allowed_us = p.next_allowed_us;
  host.saved_crawl_delay_ms = p.crawl_delay_ms;
}

void Crawler::Impl::SaveBreaker(const std::string& name, HostState& host, bool evicting) {
  const frontier::BreakerState b = frontier_->Breaker(name);
  if (evicting) {
    if (b.empty() && !host.breaker_saved) return;
  } else if (b.open == host.breaker_open && (!b.open || b.open_until == host.breaker_until)) {
    return;  // the open/closed state did not change (the ring is saved at eviction)
  }
  const int64_t until_us = b.open
                               ? WallNow() + std::chrono::duration_cast<std::chrono::microseconds>(
                                                 b.open_until - clock_->Now())
                                                 .count()
                               : 0;
  const state::BreakerRecord record{.open = b.open,
                                    .open_until_us = until_us,
                                    .ring_pos = b.ring_pos,
                                    .ring_count = b.ring_count,
                                    .ring_errors = b.ring_errors,
                                    .ring_bits = b.ring_bits};
  db_->PutBreaker(name, record);
  PutSharedHost(name, {.breaker = record});
  host.breaker_saved = true;
  host.breaker_open = b.open;
  host.breaker_until = b.open_until;
}

void Crawler::Impl::EvictHosts() {
  admission_->TrimResident();
  // With URLs parked for want of room, idle hosts make way below the cap (a sixteenth of
  // it, at least one), so parked hosts come in by batches instead of one per eviction.
  const size_t cap = db_->parked() > 0
                         ? opts_.host_cache - std::max<size_t>(opts_.host_cache / 16, 1)
                         : opts_.host_cache;
  // Each host event pays for two looks at the oldest host, so a table full of hosts with
  // work costs O(1) per event, not a scan per loop turn.
  size_t budget = 2 * host_events_ + 16;
  host_events_ = 0;
  while (opts_.host_cache > 0 && hosts_.size() > cap && budget-- > 0 && !lru_.empty()) {
    const std::string& name = *lru_.front();
    if (!frontier_->HostIdle(name)) {
      lru_.splice(lru_.end(), lru_, lru_.begin());  // has work: not a candidate now
      continue;
    }
    auto it = hosts_.find(name);
    HostState& host = it->second;
    if (host.politeness_stale) {
      // Idle: its last request ended before now, so now plus its delay is no earlier than
      // the time a reload must keep (nor than a longer wait the record holds).
      const std::chrono::microseconds delay = frontier_->HostDelay(name);
      const int64_t now_plus_delay = WallNow() + delay.count();
      WritePoliteness(name, host,
                      PolitenessOf(host, std::max(host.saved_next_allowed_us, now_plus_delay)));
    }
    SaveBreaker(name, host, /*evicting=*/true);
    frontier_->Forget(name);
    robots_->Forget(name);
    db_->NoteHostEvicted(name);
    lru_.pop_front();
    hosts_.erase(it);
    ++stats_.hosts_evicted;
  }
  stats_.hosts_resident = hosts_.size();
  stats_.hosts_resident_peak = std::max<uint64_t>(stats_.hosts_resident_peak, hosts_.size());
}

bool Crawler::Impl::CounterStore::Load(uint64_t host_hash, frontier::HostCounters* counters) {
  if (!*resumed_ && !db_->MayHaveHostRecords(host_hash)) return false;
  std::optional<frontier::HostCounters> c = db_->GetHostCounters(host_hash);
  if (!c) return false;
  *counters = *c;
  return true;
}

void Crawler::Impl::CounterStore::Save(uint64_t host_hash, const frontier::HostCounters& c) {
  db_->PutHostCounters(host_hash, c);
}

void Crawler::Impl::CounterStore::Evicted(uint64_t host_hash) { db_->NoteHostEvicted(host_hash); }

// A final outcome without a stored response (disallowed, given up, host given up): asked
// again one refresh window later, when robots.txt or the host may have changed.
state::SeenRecord Crawler::Impl::DoneRecordNow(const frontier::UrlItem& item, int status) const {
  state::SeenRecord record{
      .state = state::SeenRecord::State::kDone, .status = status, .fetch_time_us = WallNow()};
  ScheduleNext(PolicyFor(opts_.freshness, item.host), nullptr, Change::kFirst, record.fetch_time_us,
               &record);
  return record;
}

void Crawler::Impl::MarkDone(const frontier::UrlItem& item, int status) {
  RecordDone(item, DoneRecordNow(item, status));
}

// The done mark, in the local state and — a worker of a shared crawl — in the shared crawl,
// which keeps a continuous crawl's recrawl schedule (the local state gets no schedule entry:
// whoever holds the host when the URL is due recrawls it).
void Crawler::Impl::RecordDone(const frontier::UrlItem& item, const state::SeenRecord& record) {
  if (opts_.shared == nullptr) {
    db_->MarkDone(item, record);
    return;
  }
  state::SeenRecord local = record;
  local.next_due_us = 0;
  db_->MarkDone(item, local);
  shared_previous_.erase(item.fp);
  opts_.shared->Done(item,
                     std::chrono::ceil<std::chrono::milliseconds>(frontier_->HostDelay(item.host)),
                     opts_.freshness.recrawl ? &record : nullptr);
}

// A worker of a shared crawl keeps its working state for one run: what it must not lose is in
// the shared store.
Status Crawler::Impl::CheckShared() const {
  if (opts_.shared == nullptr) return Status::Ok();
  std::error_code ec;
  if (std::filesystem::exists(opts_.out_dir / "state" / "CURRENT", ec)) {
    return Status::InvalidArgument(opts_.out_dir.string() +
                                   " holds a crawl state: a worker of a shared crawl (--redis) "
                                   "starts in a new or empty --out directory (its work is kept "
                                   "in the shared store)");
  }
  return Status::Ok();
}

}  // namespace harvest::crawl
