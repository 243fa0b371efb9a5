// StateDb: the public face (forwarding to StateDb::Impl), and the seen, queue, host and
// digest records. Opening is in state_db_open.cc, the commit protocol in
// state_db_commit.cc.
#include <spdlog/spdlog.h>

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

// ---- SeenStore ----

bool SeenStore::Contains(uint64_t fp) const { return db_->IsAdmittedOrDone(fp); }

void SeenStore::Insert(uint64_t fp) { db_->AddAdmitted(fp); }

// ---- StateDb::Impl: records ----

StateDb::Impl::~Impl() {
  StopCommitter();
  if (db_) {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_->Close();
  }
}

Status StateDb::Impl::GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                               std::string* value) const {
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf, rocksdb::Slice(key.data(), key.size()), value);
  return FromRocks(s, "state: read");
}

bool StateDb::Impl::IsAdmittedOrDone(uint64_t fp) const {
  // Admitted: recent, or ingested; done: in the seen column family (a done URL whose
  // admission was not yet ingested when the process died is only there).
  if (recent_.Contains(fp)) return true;
  std::string value;
  const std::string key = SeenKey(fp);
  return GetValue(admitted_, key, &value).ok() || GetValue(seen_, key, &value).ok();
}

Status StateDb::Impl::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  // Each fingerprint once: the admitted and seen column families merged in key order (a done
  // URL is in both unless its admission was not ingested yet), then `recent_`.
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> a(db_->NewIterator(ro, admitted_));
  std::unique_ptr<rocksdb::Iterator> d(db_->NewIterator(ro, seen_));
  auto fp_of = [](const rocksdb::Iterator& it, uint64_t* fp) {
    rocksdb::Slice k = it.key();
    if (k.size() != 8) return false;
    *fp = ReadBigEndian(std::string_view(k.data(), 8), 8);
    return true;
  };
  a->SeekToFirst();
  d->SeekToFirst();
  uint64_t fa = 0, fd = 0;
  while (a->Valid() || d->Valid()) {
    if (a->Valid() && !fp_of(*a, &fa)) {
      a->Next();
      continue;
    }
    if (d->Valid() && !fp_of(*d, &fd)) {
      d->Next();
      continue;
    }
    uint64_t fp = 0;
    if (a->Valid() && (!d->Valid() || fa <= fd)) {
      fp = fa;
      if (d->Valid() && fd == fa) d->Next();
      a->Next();
    } else {
      fp = fd;
      d->Next();
    }
    if (!recent_.Contains(fp)) fn(fp);
  }
  if (Status s = FromRocks(a->status(), "state: reading the admitted set"); !s.ok()) return s;
  if (Status s = FromRocks(d->status(), "state: reading the seen store"); !s.ok()) return s;
  for (uint64_t fp : recent_.SortedKeys()) fn(fp);
  return Status::Ok();
}

std::optional<SeenRecord> StateDb::Impl::GetSeen(uint64_t fp) const {
  (void)WaitWritten();  // read what was committed
  std::string value;
  const std::string key = SeenKey(fp);
  if (GetValue(seen_, key, &value).ok()) {
    SeenRecord r;
    if (!DecodeSeen(value, &r)) return std::nullopt;
    return r;
  }
  if (recent_.Contains(fp) || GetValue(admitted_, key, &value).ok()) {
    return SeenRecord{};  // admitted, not done
  }
  return std::nullopt;
}

void StateDb::Impl::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  if (item.store_seq != 0) {
    batch_.Delete(queues_, MakeQueueKey(epoch_bits_, item.store_host,
                                        static_cast<uint8_t>(item.priority), item.store_seq)
                               .slice());
    if (queue_store_ != nullptr) queue_store_->OnDone();
  }
  batch_.Put(seen_, SeenKey(item.fp), EncodeSeen(record));
  if (record.next_due_us > 0) Schedule(item, record.next_due_us);
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
  ++queue_puts_pending_;
}

void StateDb::Impl::PutQueueEntry(const frontier::UrlItem& item) {
  EncodeItemTo(item, &scratch_);
  batch_.Put(queues_,
             MakeQueueKey(epoch_bits_, item.store_host, static_cast<uint8_t>(item.priority),
                          item.store_seq)
                 .slice(),
             scratch_);
}

void StateDb::Impl::PutHostRecord(char kind, std::string_view host, std::string value) {
  batch_.Put(hosts_, HostKey(kind, host), value);
  MaybeCommit();
}

bool StateDb::Impl::GetHostRecord(char kind, std::string_view host, std::string* value) const {
  return GetRawHostRecord(HostKey(kind, host), value);
}

void StateDb::Impl::PutRawHostRecord(const std::string& key, std::string value) {
  batch_.Put(hosts_, key, value);
  MaybeCommit();
}

bool StateDb::Impl::GetRawHostRecord(const std::string& key, std::string* value) const {
  (void)WaitWritten();  // read what was committed
  return GetValue(hosts_, key, value).ok();
}

std::optional<DigestRecord> StateDb::Impl::FindDigest(const std::string& digest) const {
  std::string value;
  if (!GetValue(digests_, digest, &value).ok()) return std::nullopt;
  DigestRecord d;
  if (!DecodeDigest(value, &d)) return std::nullopt;
  ++digest_hits_;
  return d;
}

Status StateDb::Impl::PutDigest(const std::string& digest, const DigestRecord& record) {
  Status s = FromRocks(db_->Put(rocksdb::WriteOptions(), digests_, digest, EncodeDigest(record)),
                       "state: write");
  if (!s.ok()) SetError(s);
  return s;
}

StateStats StateDb::Impl::stats() const {
  StateStats st;
  if (queue_store_ != nullptr) queue_store_->FillStats(&st);
  st.hosts = next_host_id_ - 1;
  st.commits = commits_.load();
  st.syncs = syncs_.load();
  st.ingests = ingests_.load();
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

bool StateDb::Impl::GetHostName(uint32_t id, std::string* name) const {
  return GetValue(hosts_, HostIdKey(id), name).ok();
}

uint32_t StateDb::Impl::NewHostId(std::string_view name) {
  // A new id, persisted with the pending batch, without looking the name up: a host with
  // queue entries from an earlier run keeps its id (the queue store's Load found it), and
  // any other host has no entry that could refer to an older one. (A lookup per new host
  // would be a RocksDB read per host at admission.)
  const uint32_t id = next_host_id_++;
  batch_.Put(hosts_, HostIdKey(id), std::string(name));
  std::string next;
  PutBigEndian(&next, next_host_id_, 4);
  batch_.Put(meta_, "next_host", next);
  return id;
}

uint32_t StateDb::Impl::HostIdOf(std::string_view name) {
  if (MaybeEvicted(name)) {
    std::string value;
    if (GetHostRecord('i', name, &value) && value.size() == 4) {
      return static_cast<uint32_t>(ReadBigEndian(value, 4));
    }
  }
  return NewHostId(name);
}

void StateDb::Impl::RememberHostId(std::string_view name, uint32_t id) {
  std::string v;
  PutBigEndian(&v, id, 4);
  PutHostRecord('i', name, std::move(v));
  NoteEvicted(name);
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

void StateDb::Park(const frontier::UrlItem& item) { impl_->Park(item); }
size_t StateDb::TakeParked(size_t max_hosts, int classes,
                           const std::function<void(frontier::UrlItem)>& fn) {
  return impl_->TakeParked(max_hosts, classes, fn);
}
uint64_t StateDb::parked() const { return impl_->parked(); }
void StateDb::NoteDepth(uint64_t fp, int depth) { impl_->NoteDepth(fp, depth); }
std::optional<int> StateDb::NotedDepth(uint64_t fp) const { return impl_->NotedDepth(fp); }

std::unique_ptr<frontier::QueueStore> StateDb::NewQueueStore(int priority_classes) {
  auto store = std::make_unique<RocksQueueStore>(impl_.get(), priority_classes);
  if (Status s = store->Load(); !s.ok()) impl_->SetError(s);
  return store;
}

void StateDb::ForEachLoadedHost(
    const std::function<void(const std::string& host, size_t n)>& fn) const {
  if (impl_->queue_store() != nullptr) impl_->queue_store()->ForEachLoadedHost(fn);
}

dedup::SeenBackend* StateDb::seen() { return impl_->seen(); }

Status StateDb::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  return impl_->ForEachSeen(fn);
}

std::optional<SeenRecord> StateDb::GetSeen(uint64_t fp) const { return impl_->GetSeen(fp); }

void StateDb::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  impl_->MarkDone(item, record);
}

void StateDb::UpdateQueued(const frontier::UrlItem& item) { impl_->UpdateQueued(item); }

void StateDb::PutPoliteness(std::string_view host, const HostPoliteness& p) {
  impl_->PutHostRecord('p', host, EncodePoliteness(p));
}

std::optional<HostPoliteness> StateDb::GetPoliteness(std::string_view host) const {
  std::string value;
  if (!impl_->GetHostRecord('p', host, &value)) return std::nullopt;
  HostPoliteness p;
  if (!DecodePoliteness(value, &p)) {
    spdlog::warn("state: unreadable politeness record of {} ignored", host);
    return std::nullopt;
  }
  return p;
}

void StateDb::PutRobots(std::string_view host, const RobotsRecord& r) {
  impl_->PutHostRecord('r', host, EncodeRobots(r));
}

std::optional<RobotsRecord> StateDb::GetRobots(std::string_view host) const {
  std::string value;
  if (!impl_->GetHostRecord('r', host, &value)) return std::nullopt;
  RobotsRecord r;
  if (!DecodeRobots(value, &r)) {
    spdlog::warn("state: unreadable robots record of {} ignored", host);
    return std::nullopt;
  }
  return r;
}

void StateDb::PutHostCounters(uint64_t host_hash, const frontier::HostCounters& c) {
  impl_->PutRawHostRecord(HostCountersKey(host_hash), EncodeCounters(c));
}

std::optional<frontier::HostCounters> StateDb::GetHostCounters(uint64_t host_hash) const {
  std::string value;
  if (!impl_->GetRawHostRecord(HostCountersKey(host_hash), &value)) return std::nullopt;
  frontier::HostCounters c;
  if (!DecodeCounters(value, &c)) {
    spdlog::warn("state: unreadable admission counters record ignored");
    return std::nullopt;
  }
  return c;
}

void StateDb::PutBreaker(std::string_view host, const BreakerRecord& b) {
  impl_->PutHostRecord('b', host, EncodeBreaker(b));
}

std::optional<BreakerRecord> StateDb::GetBreaker(std::string_view host) const {
  std::string value;
  if (!impl_->GetHostRecord('b', host, &value)) return std::nullopt;
  BreakerRecord b;
  if (!DecodeBreaker(value, &b)) {
    spdlog::warn("state: unreadable breaker record of {} ignored", host);
    return std::nullopt;
  }
  return b;
}

void StateDb::NoteHostEvicted(std::string_view host) { impl_->NoteEvicted(host); }
void StateDb::NoteHostEvicted(uint64_t host_hash) { impl_->NoteEvicted(host_hash); }
bool StateDb::MayHaveHostRecords(std::string_view host) const { return impl_->MaybeEvicted(host); }
bool StateDb::MayHaveHostRecords(uint64_t host_hash) const {
  return impl_->MaybeEvicted(host_hash);
}

Status StateDb::Commit() { return impl_->Commit(); }

Status StateDb::Sync() { return impl_->Sync(); }

Status StateDb::status() const { return impl_->error(); }

std::optional<DigestRecord> StateDb::FindDigest(const std::string& digest) const {
  return impl_->FindDigest(digest);
}

Status StateDb::PutDigest(const std::string& digest, const DigestRecord& record) {
  return impl_->PutDigest(digest, record);
}

uint64_t StateDb::digests_found() const { return impl_->digests_found(); }

StateStats StateDb::stats() const { return impl_->stats(); }

std::string StateDb::EngineStats() const { return impl_->EngineStats(); }

void StateDb::AbandonForTesting() { impl_.reset(); }

}  // namespace harvest::state
