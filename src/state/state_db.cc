// StateDb: the public face (forwarding to StateDb::Impl and its tables), and the seen,
// admitted and queue records, with the ingestion of the admitted set. Opening is in
// state_db_open.cc, the commit protocol (Committer) in state_db_commit.cc, each table in
// its own file (*_table.h).
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table_properties.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include "state/rocks_queue_store.h"
#include "state/state_db_impl.h"

namespace harvest::state {

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsNoSpace()) return Status::ResourceExhausted(msg);
  return Status::IOError(msg);
}

Status ReadValue(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                 std::string* value) {
  rocksdb::Status s =
      db->Get(rocksdb::ReadOptions(), cf, rocksdb::Slice(key.data(), key.size()), value);
  return FromRocks(s, "state: read");
}

size_t HandOverTaken(std::vector<TakenEntry>* taken, rocksdb::WriteBatch* batch,
                     rocksdb::ColumnFamilyHandle* cf, uint64_t* count,
                     const std::function<void(frontier::UrlItem)>& fn) {
  for (TakenEntry& t : *taken) {
    if (!t.key.empty()) batch->Delete(cf, t.key);
    if (*count > 0) --*count;
    fn(std::move(t.item));
  }
  return taken->size();
}

// ---- SeenStore ----

bool SeenStore::Contains(uint64_t fp) const { return db_->IsAdmittedOrDone(fp); }

void SeenStore::Insert(uint64_t fp) { db_->AddAdmitted(fp); }

// ---- StateDb::Impl: records ----

StateDb::Impl::~Impl() {
  if (committer_) committer_->Stop();
  if (db_) {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_->Close();
  }
}

bool StateDb::Impl::IsAdmittedOrDone(uint64_t fp) const {
  // Admitted: recent, or ingested; done: in the seen column family (a done URL whose
  // admission was not yet ingested when the process died is only there).
  if (recent_.Contains(fp) || IsIngested(fp)) return true;
  std::string value;
  return ReadValue(db_.get(), seen_, SeenKey(fp), &value).ok();
}

bool StateDb::Impl::IsIngested(uint64_t fp) const {
  Result<bool> in = admitted_runs_->Contains(fp);
  if (in.ok()) return *in;
  // Unreadable: the error stops the crawl (sticky); "admitted" meanwhile, so that no URL is
  // fetched twice on its account.
  committer_->SetError(in.status());
  return true;
}

Status StateDb::Impl::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  // Each fingerprint once: the admitted and seen column families merged in key order (a done
  // URL is in both unless its admission was not ingested yet), then `recent_`.
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> d(db_->NewIterator(ro, seen_));
  // The seen family's next well-formed fingerprint into *fd; false at its end.
  auto next_done = [&](uint64_t* fd) {
    for (; d->Valid(); d->Next()) {
      rocksdb::Slice k = d->key();
      if (k.size() == 8) {
        *fd = ReadBigEndian(std::string_view(k.data(), 8), 8);
        return true;
      }
    }
    return false;
  };
  auto emit = [&](uint64_t fp) {
    if (!recent_.Contains(fp)) fn(fp);
  };
  d->SeekToFirst();
  uint64_t fd = 0;
  Status s = admitted_runs_->ForEach([&](uint64_t fa) {
    // The done fingerprints below fa, then fa (once, if it is done as well).
    while (next_done(&fd) && fd <= fa) {
      if (fd < fa) emit(fd);
      d->Next();
    }
    emit(fa);
  });
  if (!s.ok()) return s;
  while (next_done(&fd)) {
    emit(fd);
    d->Next();
  }
  if (Status r = FromRocks(d->status(), "state: reading the seen store"); !r.ok()) return r;
  for (uint64_t fp : recent_.SortedKeys()) fn(fp);
  return Status::Ok();
}

std::optional<SeenRecord> StateDb::Impl::GetSeen(uint64_t fp) const {
  (void)committer_->WaitWritten();  // read what was committed
  std::string value;
  const std::string key = SeenKey(fp);
  if (ReadValue(db_.get(), seen_, key, &value).ok()) {
    SeenRecord r;
    if (!DecodeSeen(value, &r)) return std::nullopt;
    return r;
  }
  if (recent_.Contains(fp) || IsIngested(fp)) {
    return SeenRecord{};  // admitted, not done
  }
  return std::nullopt;
}

void StateDb::Impl::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  rocksdb::WriteBatch* batch = committer_->batch();
  if (item.store_seq != 0) {
    batch->Delete(queues_, MakeQueueKey(epoch_bits_, item.store_host,
                                        static_cast<uint8_t>(item.priority), item.store_seq)
                               .slice());
    if (queue_store_ != nullptr) queue_store_->OnDone();
  }
  batch->Put(seen_, SeenKey(item.fp), EncodeSeen(record));
  if (record.next_due_us > 0) schedule_->Add(item, record.next_due_us);
  MaybeCommit();
}

void StateDb::Impl::UpdateQueued(const frontier::UrlItem& item) {
  if (item.store_seq == 0) return;
  PutQueueEntry(item);
  MaybeCommit();
}

void StateDb::Impl::AddQueueEntry(const frontier::UrlItem& item) {
  last_queue_seq_ = item.store_seq;
  PutQueueEntry(item);
  committer_->NoteNeededByReads();
}

void StateDb::Impl::PutQueueEntry(const frontier::UrlItem& item) {
  EncodeItemTo(item, &scratch_);
  committer_->batch()->Put(queues_,
                           MakeQueueKey(epoch_bits_, item.store_host,
                                        static_cast<uint8_t>(item.priority), item.store_seq)
                               .slice(),
                           scratch_);
}

bool StateDb::Impl::Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us) {
  if (record.next_due_us <= 0 || due_us == record.next_due_us) return false;
  if (!schedule_->Move(fp, record.next_due_us, due_us)) return false;
  SeenRecord moved = record;
  moved.next_due_us = due_us;
  committer_->batch()->Put(seen_, SeenKey(fp), EncodeSeen(moved));
  MaybeCommit();
  return true;
}

void StateDb::Impl::Park(const frontier::UrlItem& item) {
  assert(queue_store_ != nullptr);
  const uint64_t seq = queue_store_->TakeSeq();
  // Like a queue entry: the fingerprint is in `recent` until an ingest covers `seq`.
  last_queue_seq_ = seq;
  committer_->NoteNeededByReads();
  parked_->Add(item, seq);
}

void StateDb::Impl::Defer(std::string_view name, const frontier::UrlItem& item) {
  assert(queue_store_ != nullptr);
  const uint64_t seq = queue_store_->TakeSeq();
  // Like a queue entry: the fingerprint is in `recent` until an ingest covers `seq`.
  last_queue_seq_ = seq;
  committer_->NoteNeededByReads();
  deferred_->Add(name, item, seq);
}

Status StateDb::Impl::LoadDeferred(uint64_t* max_seq) {
  Status s = deferred_->Load(max_seq, &deferred_hosts_, [this](uint64_t seq, std::string_view v) {
    (void)ReadmitIfNotIngested(seq, v);
  });
  if (!s.ok()) return s;
  RaiseLastQueueSeq(*max_seq);
  return Status::Ok();
}

Status StateDb::Impl::LoadParked(uint64_t* max_seq) {
  Status s = parked_->Load(max_seq, [this](uint64_t seq, std::string_view value) {
    return ReadmitIfNotIngested(seq, value);
  });
  if (!s.ok()) return s;
  RaiseLastQueueSeq(*max_seq);
  return Status::Ok();
}

Result<uint64_t> StateDb::Impl::PutStoredFetch(const StoredFetchRecords& records) {
  rocksdb::WriteBatch batch;
  if (records.digest) digests_->PutTo(&batch, records.digest->first, records.digest->second);
  if (records.simhash) {
    simhashes_->PutTo(&batch, records.simhash->first, records.simhash->second);
  }
  return pages_->Write(records.page, &batch);
}

StateStats StateDb::Impl::stats() const {
  StateStats st;
  if (queue_store_ != nullptr) queue_store_->FillStats(&st);
  st.hosts = host_records_->ids_given();
  st.commits = committer_->commits();
  st.syncs = committer_->syncs();
  st.ingests = ingests_.load();
  const FingerprintRuns::Stats runs = admitted_runs_->stats();
  st.admitted_runs = runs.runs;
  st.admitted_merged = runs.merged_keys;
  st.block_cache_bytes = block_cache_->GetCapacity();
  st.table_metadata_bytes = table_metadata_bytes_.load();
  return st;
}

std::string StateDb::Impl::EngineStats() const {
  std::string out;
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    std::string cf;
    if (db_->GetProperty(h, "rocksdb.cfstats-no-file-histogram", &cf)) out += cf;
  }
  return out;
}

bool StateDb::Impl::BackgroundWorkPending() const {
  // Running work only: a family's "compaction-pending" can stay set while RocksDB's picker
  // finds nothing to do.
  if (!admitted_runs_->Idle()) return true;
  uint64_t n = 0;
  if (db_->GetIntProperty("rocksdb.num-running-compactions", &n) && n > 0) return true;
  return db_->GetIntProperty("rocksdb.num-running-flushes", &n) && n > 0;
}

Status StateDb::Impl::MergeLevel0() {
  if (Status s = FromRocks(db_->Flush(rocksdb::FlushOptions(), handles_), "state: flush");
      !s.ok()) {
    return s;
  }
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    rocksdb::ColumnFamilyMetaData meta;
    db_->GetColumnFamilyMetaData(h, &meta);
    if (meta.levels.empty() || meta.levels[0].files.empty()) continue;
    // The level below level 0 that holds tables (the last level when none does): the one a
    // leveled compaction of level 0 writes into. RocksDB adds its overlapping tables to the
    // inputs. A universal-style family (all its runs in level 0) is left as it is.
    if (meta.levels.size() < 2) continue;
    int output = static_cast<int>(meta.levels.size()) - 1;
    for (size_t l = 1; l < meta.levels.size(); ++l) {
      if (!meta.levels[l].files.empty()) {
        output = static_cast<int>(l);
        break;
      }
    }
    rocksdb::ColumnFamilyDescriptor d;
    if (h->GetDescriptor(&d).ok() && d.options.compaction_style != rocksdb::kCompactionStyleLevel) {
      continue;
    }
    std::vector<std::string> inputs;
    for (const rocksdb::SstFileMetaData& f : meta.levels[0].files) {
      inputs.push_back(f.name);
    }
    if (Status s = FromRocks(db_->CompactFiles(rocksdb::CompactionOptions(), h, inputs, output),
                             "state: merging level 0 of " + h->GetName());
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

// ---- StateDb::Impl: for RocksQueueStore ----

void StateDb::Impl::DetachQueueStore(const RocksQueueStore* store) {
  if (queue_store_ == store) queue_store_ = nullptr;
}

std::unique_ptr<rocksdb::Iterator> StateDb::Impl::NewQueueIterator(
    const rocksdb::ReadOptions& ro) const {
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro, queues_));
}

bool StateDb::Impl::ReadmitIfNotIngested(uint64_t seq, std::string_view item_value) {
  if (seq <= admitted_through_) return false;
  uint64_t fp = 0;
  if (!ItemFingerprint(item_value, &fp)) return false;
  recent_.Insert(fp);
  return true;
}

// ---- StateDb::Impl: commits and the admitted set ----

Status StateDb::Impl::Commit() {
  Status s = committer_->HandOver();
  if (const auto now = std::chrono::steady_clock::now();
      now - cache_sized_at_ >= std::chrono::seconds(10)) {
    cache_sized_at_ = now;
    SizeBlockCache();
  }
  if (!s.ok() || recent_.size() < next_ingest_at_) return s;
  s = committer_->WaitWritten();
  if (!s.ok()) return s;
  // Fingerprints go to the admitted set only after their queue entries are durable: an
  // admitted fingerprint without its entry would be a URL refused as seen and never
  // fetched. Commit() runs between admissions (an admission's seen insert and its queue
  // entry are made in one step of the I/O thread), so every entry is in the batch just
  // written; the WAL is synced first because the ingested file is.
  if (options_.sync) {
    s = FromRocks(db_->SyncWAL(), "state: sync");
    if (!s.ok()) {
      SetError(s);
      return s;
    }
  }
  return Ingest();
}

void StateDb::Impl::Close() {
  Status s = committer_->HandOver();
  if (s.ok()) s = Sync();
  if (s.ok()) s = Ingest();
  if (s.ok()) s = committer_->HandOver();
  if (s.ok()) s = Sync();
  if (!s.ok()) spdlog::error("state: closing: {}", s.ToString());
}

Status StateDb::Impl::Ingest() {
  // One sorted table file of the admissions since the last ingest costs a fraction of a
  // seen-store insert per admission (a random 64-bit key into a skip list and then through
  // every compaction level, the largest cost of admission at scale: docs/benchmarks.md,
  // "Durable frontier at scale").
  next_ingest_at_ = recent_.size() + std::max<size_t>(options_.ingest_every / 4, 1);
  // Every queue entry up to `through` has its fingerprint in `recent_` or ingested already.
  const uint64_t through = last_queue_seq_;
  if (recent_.size() > 0) {
    if (Status s = IngestRecent(); !s.ok()) {
      SetError(s);
      return s;
    }
    recent_.Clear();  // in place: no second table while the first is freed
    next_ingest_at_ = std::max<size_t>(options_.ingest_every, 1);
    ++ingests_;
  }
  AdvanceAdmittedThrough(through);
  return Status::Ok();
}

// The index and filter blocks of a family's table files grow with its keys (a filter ~1.25
// bytes per key). A point lookup whose index or filter partition is not cached reads and
// checksums it from the file: at 100 M admitted URLs with the cache at 64 MiB, lookups of
// seen records, depths and digests cost 1.4-3.2x what they cost at 1 M (docs/benchmarks.md,
// "A block cache that grows with the tables"). Index and filter blocks are cached with high
// priority, in a pool of half the cache; twice their size keeps them all there.
void StateDb::Impl::SizeBlockCache() {
  uint64_t metadata = 0;
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    rocksdb::TablePropertiesCollection tables;
    if (!db_->GetPropertiesOfAllTables(h, &tables).ok()) continue;
    for (const auto& [file, props] : tables) metadata += props->index_size + props->filter_size;
  }
  table_metadata_bytes_ = metadata;
  const uint64_t least = options_.block_cache_bytes;
  const uint64_t most = std::max<uint64_t>(options_.block_cache_max_bytes, least);
  const auto size = static_cast<size_t>(std::clamp<uint64_t>(2 * metadata, least, most));
  if (size != block_cache_->GetCapacity()) block_cache_->SetCapacity(size);
}

// Adds `recent_` to the admitted set as one sorted run.
Status StateDb::Impl::IngestRecent() { return admitted_runs_->Add(recent_.SortedKeys()); }

// Records (in the pending batch) that every queue entry up to `through` has its
// fingerprint in the admitted set.
void StateDb::Impl::AdvanceAdmittedThrough(uint64_t through) {
  if (through <= admitted_through_) return;
  admitted_through_ = through;
  std::string v;
  PutBigEndian(&v, through, 8);
  committer_->batch()->Put(meta_, "admitted_through", v);
}

// ---- StateDb ----

StateDb::StateDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StateDb::~StateDb() {
  if (impl_) impl_->Close();
}

Result<std::unique_ptr<StateDb>> StateDb::Open(StateOptions options) {
  Result<std::unique_ptr<Impl>> impl = Impl::Open(options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<StateDb>(new StateDb(std::move(*impl)));
}

bool StateDb::created() const { return impl_->created(); }
dedup::SimHashVersion StateDb::simhash_version() const { return impl_->simhash_version(); }

std::unique_ptr<frontier::QueueStore> StateDb::NewQueueStore(int priority_classes) {
  auto store = std::make_unique<RocksQueueStore>(impl_.get(), priority_classes);
  if (Status s = store->Load(); !s.ok()) impl_->SetError(s);
  return store;
}

void StateDb::ForEachLoadedHost(
    const std::function<void(const std::string& host, size_t n)>& fn) const {
  if (impl_->queue_store() != nullptr) impl_->queue_store()->ForEachLoadedHost(fn);
}

// ---- Seen records ----

dedup::SeenBackend* StateDb::seen() { return impl_->seen(); }
Status StateDb::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  return impl_->ForEachSeen(fn);
}
std::optional<SeenRecord> StateDb::GetSeen(uint64_t fp) const { return impl_->GetSeen(fp); }
void StateDb::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  impl_->MarkDone(item, record);
}
void StateDb::UpdateQueued(const frontier::UrlItem& item) { impl_->UpdateQueued(item); }

// ---- The recrawl schedule (ScheduleTable) ----

std::optional<int64_t> StateDb::NextDue() const { return impl_->schedule().next_due(); }
size_t StateDb::TakeDue(int64_t now_us, size_t max,
                        const std::function<void(frontier::UrlItem)>& fn) {
  return impl_->schedule().TakeDue(now_us, max, fn);
}
bool StateDb::Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us) {
  return impl_->Reschedule(fp, record, due_us);
}
uint64_t StateDb::scheduled() const { return impl_->schedule().count(); }

// ---- Parked URLs (ParkedTable) and shallower paths (DepthTable) ----

void StateDb::Park(const frontier::UrlItem& item) { impl_->Park(item); }
size_t StateDb::TakeParked(size_t max_hosts, int classes,
                           const std::function<void(frontier::UrlItem)>& fn) {
  return impl_->parked().Take(max_hosts, classes, fn);
}
uint64_t StateDb::parked() const { return impl_->parked().count(); }
void StateDb::Defer(std::string_view name, const frontier::UrlItem& item) {
  impl_->Defer(name, item);
}
size_t StateDb::TakeDeferred(std::string_view name, size_t max,
                             const std::function<void(frontier::UrlItem)>& fn) {
  return impl_->deferred().Take(name, max, fn);
}
uint64_t StateDb::deferred() const { return impl_->deferred().count(); }
const std::map<std::string, uint64_t>& StateDb::DeferredHosts() const {
  return impl_->deferred_hosts();
}
void StateDb::NoteDepth(uint64_t fp, int depth) { impl_->depths().Note(fp, depth); }
std::optional<int> StateDb::NotedDepth(uint64_t fp) const { return impl_->depths().Noted(fp); }

// ---- Host records (HostRecordTable) ----

void StateDb::PutPoliteness(std::string_view host, const HostPoliteness& p) {
  impl_->host_records().PutPoliteness(host, p);
}
std::optional<HostPoliteness> StateDb::GetPoliteness(std::string_view host) const {
  return impl_->host_records().GetPoliteness(host);
}
void StateDb::PutRobots(std::string_view host, const RobotsRecord& r) {
  impl_->host_records().PutRobots(host, r);
}
std::optional<RobotsRecord> StateDb::GetRobots(std::string_view host) const {
  return impl_->host_records().GetRobots(host);
}
void StateDb::PutHostCounters(uint64_t host_hash, const frontier::HostCounters& c) {
  impl_->host_records().PutCounters(host_hash, c);
}
std::optional<frontier::HostCounters> StateDb::GetHostCounters(uint64_t host_hash) const {
  return impl_->host_records().GetCounters(host_hash);
}
void StateDb::AddHostAdmitted(uint64_t host_hash, uint64_t n) {
  impl_->host_records().AddAdmitted(host_hash, n);
}
Status StateDb::ForEachHostCounters(
    const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) const {
  return impl_->host_records().ForEachCounters(fn);
}
void StateDb::PutUpgrade(std::string_view name, const UpgradeRecord& u) {
  impl_->host_records().PutUpgrade(name, u);
}
std::optional<UpgradeRecord> StateDb::GetUpgrade(std::string_view name) const {
  return impl_->host_records().GetUpgrade(name);
}
void StateDb::PutBreaker(std::string_view host, const BreakerRecord& b) {
  impl_->host_records().PutBreaker(host, b);
}
std::optional<BreakerRecord> StateDb::GetBreaker(std::string_view host) const {
  return impl_->host_records().GetBreaker(host);
}
void StateDb::PutHostOverride(std::string_view host, const HostOverride& o) {
  impl_->host_records().PutOverride(host, o);
}
std::optional<HostOverride> StateDb::GetHostOverride(std::string_view host) const {
  return impl_->host_records().GetOverride(host);
}
Status StateDb::ForEachHostOverride(
    const std::function<void(const std::string&, const HostOverride&)>& fn) const {
  return impl_->host_records().ForEachOverride(fn);
}
void StateDb::NoteHostEvicted(std::string_view host) { impl_->host_records().NoteEvicted(host); }
void StateDb::NoteHostEvicted(uint64_t host_hash) { impl_->host_records().NoteEvicted(host_hash); }
bool StateDb::MayHaveHostRecords(std::string_view host) const {
  return impl_->host_records().MaybeEvicted(host);
}
bool StateDb::MayHaveHostRecords(uint64_t host_hash) const {
  return impl_->host_records().MaybeEvicted(host_hash);
}

// ---- Commits ----

Status StateDb::Commit() { return impl_->Commit(); }
Status StateDb::Sync() { return impl_->Sync(); }
Status StateDb::status() const { return impl_->error(); }

// ---- The writer thread's records (DigestTable, SimHashTable, PageTable) ----

std::optional<DigestRecord> StateDb::FindDigest(const std::string& digest) const {
  return impl_->digests().Find(digest);
}
Status StateDb::PutDigest(const std::string& digest, const DigestRecord& record) {
  return impl_->digests().Put(digest, record);
}
uint64_t StateDb::digests_found() const { return impl_->digests().found(); }
Status StateDb::PutSimHash(uint64_t seq, const SimHashRecord& record) {
  return impl_->simhashes().Put(seq, record);
}
std::optional<SimHashRecord> StateDb::GetSimHash(uint64_t seq) const {
  return impl_->simhashes().Get(seq);
}
Status StateDb::TrimSimHashes(uint64_t below_seq) { return impl_->simhashes().Trim(below_seq); }
Status StateDb::ForEachSimHash(
    size_t max, const std::function<void(uint64_t, const SimHashRecord&)>& fn) const {
  return impl_->simhashes().ForEach(max, fn);
}
Result<uint64_t> StateDb::AddPage(PageEntry page) {
  StoredFetchRecords r;
  r.page = std::move(page);
  return impl_->PutStoredFetch(r);
}
Result<uint64_t> StateDb::PutStoredFetch(const StoredFetchRecords& records) {
  return impl_->PutStoredFetch(records);
}
std::optional<PageEntry> StateDb::GetPage(uint64_t id) const { return impl_->pages().Get(id); }
PageScan StateDb::ScanPages(const PageFilter& filter) const { return impl_->pages().Scan(filter); }
uint64_t StateDb::pages_added() const { return impl_->pages().last_id(); }

// ---- Statistics ----

StateStats StateDb::stats() const { return impl_->stats(); }
std::string StateDb::EngineStats() const { return impl_->EngineStats(); }
bool StateDb::BackgroundWorkPending() const { return impl_->BackgroundWorkPending(); }
Status StateDb::MergeLevel0() { return impl_->MergeLevel0(); }

void StateDb::AbandonForTesting() { impl_.reset(); }

}  // namespace harvest::state
