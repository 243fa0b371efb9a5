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
  hosts_->SetRunStart(started_);
  db_->ForEachLoadedHost([this](const std::string& host, size_t n) {
    frontier_->AdoptStoredHost(host);
    hosts_->Ensure(host);
    stats_.resumed_queued += n;
  });
  spdlog::info(
      "resuming the crawl in {}: {} URLs queued or in flight over {} hosts, {} URLs "
      "seen (Bloom filter restored in {:.2f} s)",
      opts_.out_dir.string(), stats_.resumed_queued, hosts_->size(), stats_.resumed_seen,
      stats_.bloom_restore_s);
}

void Crawler::Impl::EvictHosts() {
  admission_->TrimResident();
  // With URLs parked for want of room, idle hosts make way below the cap (a sixteenth of
  // it, at least one), so parked hosts come in by batches instead of one per eviction.
  // host_cache 0: no bound (nothing is evicted; the table's figures are kept).
  const size_t cap = opts_.host_cache == 0 ? SIZE_MAX
                     : db_->parked() > 0
                         ? opts_.host_cache - std::max<size_t>(opts_.host_cache / 16, 1)
                         : opts_.host_cache;
  hosts_->Evict(cap);
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
