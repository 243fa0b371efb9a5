// StateDb: opening the database, the pending batch, seen/host/digest records.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "state/internal.h"
#include "state/queue_store_impl.h"

namespace harvest::state {
namespace {

constexpr const char* kColumnFamilies[] = {"queues", "seen", "hosts", "digests", "meta"};

rocksdb::CompressionType BestCompression() {
  for (rocksdb::CompressionType t : rocksdb::GetSupportedCompressions()) {
    if (t == rocksdb::kLZ4Compression) return t;
  }
  for (rocksdb::CompressionType t : rocksdb::GetSupportedCompressions()) {
    if (t == rocksdb::kSnappyCompression) return t;
  }
  return rocksdb::kNoCompression;
}

class SeenStore final : public dedup::SeenBackend {
 public:
  explicit SeenStore(StateDb::Impl* db) : db_(db) {}
  bool Contains(uint64_t fp) const override {
    if (db_->pending_seen.Contains(fp)) return true;
    std::string value;
    return db_->GetValue(db_->seen, SeenKey(fp), &value).ok();
  }
  void Insert(uint64_t fp) override {
    db_->seen_inserts.push_back(fp);
    db_->pending_seen.Insert(fp);
    db_->MaybeCommit();
  }

 private:
  StateDb::Impl* db_;
};

// Replays a WriteBatch's puts and deletes into another one (Commit's merge).
class Replay final : public rocksdb::WriteBatch::Handler {
 public:
  Replay(StateDb::Impl* db, rocksdb::WriteBatch* out) : db_(db), out_(out) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    rocksdb::ColumnFamilyHandle* h = Handle(cf);
    return h != nullptr ? out_->Put(h, key, value) : rocksdb::Status::Corruption("column family");
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    rocksdb::ColumnFamilyHandle* h = Handle(cf);
    return h != nullptr ? out_->Delete(h, key) : rocksdb::Status::Corruption("column family");
  }

 private:
  rocksdb::ColumnFamilyHandle* Handle(uint32_t id) const {
    for (rocksdb::ColumnFamilyHandle* h : db_->handles) {
      if (h->GetID() == id) return h;
    }
    return nullptr;
  }
  StateDb::Impl* db_;
  rocksdb::WriteBatch* out_;
};

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsNoSpace()) return Status::ResourceExhausted(msg);
  return Status::IOError(msg);
}

StateDb::Impl::~Impl() {
  if (db) {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    handles.clear();
    db->Close();
  }
}

void StateDb::Impl::SetError(const Status& s) {
  std::lock_guard lock(error_mu);
  if (error.ok()) {
    spdlog::error("state: {}", s.ToString());
    error = s;
  }
}

Status StateDb::Impl::Commit() {
  if (batch.Count() == 0 && seen_inserts.empty()) return Status::Ok();
  // The seen inserts go first, sorted: random 64-bit keys cost a full skip-list descent
  // each (the largest share of admission time at scale), sorted ones mostly continue from
  // the previous insert's position (memtable insert hint, see Open). Putting them before
  // the rest of the batch keeps every key's write order: a URL's seen insert precedes any
  // other write of its seen record (MarkDone comes after its admission).
  rocksdb::WriteBatch merged;
  rocksdb::WriteBatch* out = &batch;
  if (!seen_inserts.empty()) {
    static const std::string kQueuedValue = EncodeSeen(SeenRecord{});
    std::sort(seen_inserts.begin(), seen_inserts.end());
    std::string key;
    for (uint64_t fp : seen_inserts) {
      key.clear();
      PutBigEndian(&key, fp, 8);
      if (rocksdb::Status rs = merged.Put(seen, key, kQueuedValue); !rs.ok()) {
        return FromRocks(rs, "state: batch");
      }
    }
    Replay replay(this, &merged);
    if (rocksdb::Status rs = batch.Iterate(&replay); !rs.ok()) return FromRocks(rs, "state: batch");
    out = &merged;
  }
  rocksdb::WriteOptions wo;
  Status s = FromRocks(db->Write(wo, out), "state: write");
  if (!s.ok()) {
    // The batch is kept: a later Commit retries it (e.g. once disk space returns). RocksDB
    // refuses writes after a failed one until resumed.
    SetError(s);
    (void)db->Resume();
    return s;
  }
  batch.Clear();
  seen_inserts.clear();
  queue_puts_pending = 0;
  pending_seen = dedup::FingerprintSet(1024);  // sized for a loop iteration: no regrowth
  ++commits;
  {
    std::lock_guard lock(error_mu);
    if (!error.ok()) {
      spdlog::warn("state: writable again after: {}", error.ToString());
      error = Status::Ok();
    }
  }
  return s;
}

void StateDb::Impl::MaybeCommit() {
  // A seen insert takes ~20 bytes in a batch (8-byte key, 2-byte value, framing).
  if (batch.GetDataSize() + 20 * seen_inserts.size() >= options.max_batch_bytes) (void)Commit();
}

Status StateDb::Impl::GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                               std::string* value) const {
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, rocksdb::Slice(key.data(), key.size()),
                              value);
  return FromRocks(s, "state: read");
}

uint32_t StateDb::Impl::HostId(std::string_view name) {
  const std::string key = HostKey('i', name);
  std::string value;
  if (GetValue(hosts, key, &value).ok() && value.size() == 4) {
    return static_cast<uint32_t>(ReadBigEndian(value, 4));
  }
  // New: assigned here, persisted with the pending batch (the queue store registers each
  // name once per run, so an id not yet committed is never looked up again).
  const uint32_t id = next_host_id++;
  std::string id_bytes;
  PutBigEndian(&id_bytes, id, 4);
  batch.Put(hosts, key, id_bytes);
  batch.Put(hosts, HostIdKey(id), std::string(name));
  std::string next;
  PutBigEndian(&next, next_host_id, 4);
  batch.Put(meta, "next_host", next);
  return id;
}

StateDb::StateDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StateDb::~StateDb() {
  if (impl_ && impl_->db) {
    Status s = impl_->Commit();
    if (s.ok()) s = Sync();
    if (!s.ok()) spdlog::error("state: closing: {}", s.ToString());
  }
}

Result<std::unique_ptr<StateDb>> StateDb::Open(StateOptions options) {
  if (options.dir.empty()) return Status::InvalidArgument("state: no directory given");
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return Status::IOError("state: cannot create " + options.dir.string() + ": " + ec.message());
  }
  auto impl = std::make_unique<Impl>();
  impl->created = !std::filesystem::exists(options.dir / "CURRENT", ec);

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.bytes_per_sync = 1u << 20;
  db_options.db_write_buffer_size = 4 * options.write_buffer_bytes;
  db_options.max_total_wal_size = 4 * options.write_buffer_bytes;
  db_options.keep_log_file_num = 3;
  db_options.max_open_files = 1000;

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  auto cf_options = [&](bool prefix_by_host, size_t buffer, int hint_prefix) {
    rocksdb::ColumnFamilyOptions cf;
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = cache;
    table.cache_index_and_filter_blocks = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    if (prefix_by_host) {
      // A host queue refill seeks once per host. Whole-file index and filter blocks of a
      // large queue store (tens of MB) do not fit the block cache and were re-read and
      // decompressed per seek (6.5 k refills/s at 5 M URLs); partitioned ones load 4 KiB
      // pieces (41 k/s). docs/benchmarks.md, "Durable frontier at scale".
      table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
      table.partition_filters = true;
      table.metadata_block_size = 4096;
      table.pin_top_level_index_and_filter = true;
      table.enable_index_compression = false;
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
      table.whole_key_filtering = false;
      cf.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(4));
    }
    // Memtable insert hints: the skip list remembers where the last insert with the same
    // prefix went. queues: a host's items arrive in sequence order (prefix = host id);
    // seen: Commit writes the inserts sorted (one hint for the whole key space).
    if (hint_prefix >= 0) {
      cf.memtable_insert_with_hint_prefix_extractor.reset(
          rocksdb::NewFixedPrefixTransform(static_cast<size_t>(hint_prefix)));
    }
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    cf.write_buffer_size = buffer;
    cf.max_write_buffer_number = 3;
    cf.compression = BestCompression();
    cf.level_compaction_dynamic_level_bytes = true;
    cf.target_file_size_base = 64u << 20;
    cf.max_bytes_for_level_base = 256u << 20;
    return cf;
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, cf_options(false, 1u << 20, -1));
  for (const char* name : kColumnFamilies) {
    const bool queues = std::string_view(name) == "queues";
    const bool small = std::string_view(name) == "meta" || std::string_view(name) == "hosts";
    const int hint = queues ? 4 : std::string_view(name) == "seen" ? 0 : -1;
    const size_t buf = small ? options.write_buffer_bytes / 4 : options.write_buffer_bytes;
    descriptors.emplace_back(
        name, cf_options(queues, buf, hint));
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs =
      rocksdb::DB::Open(db_options, options.dir.string(), descriptors, &impl->handles, &raw);
  if (!rs.ok()) {
    std::string hint = rs.ToString().find("lock") != std::string::npos
                           ? " (is another harvest process using this crawl directory?)"
                           : "";
    return Status::IOError("state: cannot open " + options.dir.string() + ": " + rs.ToString() +
                           hint);
  }
  impl->db.reset(raw);
  impl->queues = impl->handles[1];
  impl->seen = impl->handles[2];
  impl->hosts = impl->handles[3];
  impl->digests = impl->handles[4];
  impl->meta = impl->handles[5];
  impl->options = options;

  std::string version;
  Status vs = impl->GetValue(impl->meta, "version", &version);
  if (vs.ok()) {
    if (version != kFormatVersion) {
      return Status::InvalidArgument("state: " + options.dir.string() + " has format version " +
                                     version + "; this harvest reads version " +
                                     std::string(kFormatVersion));
    }
  } else if (vs.code() == Status::Code::kNotFound) {
    Status ws = FromRocks(impl->db->Put(rocksdb::WriteOptions(), impl->meta, "version",
                                        std::string(kFormatVersion)),
                          "state: write");
    if (!ws.ok()) return ws;
  } else {
    return vs;
  }
  std::string next;
  if (impl->GetValue(impl->meta, "next_host", &next).ok() && next.size() == 4) {
    impl->next_host_id = static_cast<uint32_t>(ReadBigEndian(next, 4));
  }
  impl->seen_backend = std::make_unique<SeenStore>(impl.get());
  return std::unique_ptr<StateDb>(new StateDb(std::move(impl)));
}

bool StateDb::created() const { return impl_->created; }

dedup::SeenBackend* StateDb::seen() { return impl_->seen_backend.get(); }

Status StateDb::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(ro, impl_->seen));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() == 8) fn(ReadBigEndian(std::string_view(k.data(), 8), 8));
  }
  return FromRocks(it->status(), "state: reading the seen store");
}

std::optional<SeenRecord> StateDb::GetSeen(uint64_t fp) const {
  std::string value;
  if (!impl_->GetValue(impl_->seen, SeenKey(fp), &value).ok()) return std::nullopt;
  SeenRecord r;
  if (!DecodeSeen(value, &r)) return std::nullopt;
  return r;
}

void StateDb::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  if (item.store_seq != 0) {
    impl_->batch.Delete(impl_->queues,
                        QueueKey(item.store_host, static_cast<uint8_t>(item.priority), item.store_seq));
    if (impl_->queue_store != nullptr) impl_->queue_store->OnDone();
  }
  impl_->batch.Put(impl_->seen, SeenKey(item.fp), EncodeSeen(record));
  impl_->MaybeCommit();
}

void StateDb::UpdateQueued(const frontier::UrlItem& item) {
  if (item.store_seq == 0) return;
  impl_->batch.Put(impl_->queues,
                   QueueKey(item.store_host, static_cast<uint8_t>(item.priority), item.store_seq),
                   EncodeItem(item));
  impl_->MaybeCommit();
}

void StateDb::PutPoliteness(std::string_view host, const HostPoliteness& p) {
  impl_->batch.Put(impl_->hosts, HostKey('p', host), EncodePoliteness(p));
  impl_->MaybeCommit();
}

std::optional<HostPoliteness> StateDb::GetPoliteness(std::string_view host) const {
  std::string value;
  if (!impl_->GetValue(impl_->hosts, HostKey('p', host), &value).ok()) return std::nullopt;
  HostPoliteness p;
  if (!DecodePoliteness(value, &p)) {
    spdlog::warn("state: unreadable politeness record of {} ignored", host);
    return std::nullopt;
  }
  return p;
}

void StateDb::PutRobots(std::string_view host, const RobotsRecord& r) {
  impl_->batch.Put(impl_->hosts, HostKey('r', host), EncodeRobots(r));
  impl_->MaybeCommit();
}

std::optional<RobotsRecord> StateDb::GetRobots(std::string_view host) const {
  std::string value;
  if (!impl_->GetValue(impl_->hosts, HostKey('r', host), &value).ok()) return std::nullopt;
  RobotsRecord r;
  if (!DecodeRobots(value, &r)) {
    spdlog::warn("state: unreadable robots record of {} ignored", host);
    return std::nullopt;
  }
  return r;
}

Status StateDb::Commit() { return impl_->Commit(); }

Status StateDb::Sync() {
  if (!impl_->options.sync) return Status::Ok();
  Status s = FromRocks(impl_->db->SyncWAL(), "state: sync");
  if (!s.ok()) {
    impl_->SetError(s);
  } else {
    ++impl_->syncs;
  }
  return s;
}

Status StateDb::status() const {
  std::lock_guard lock(impl_->error_mu);
  return impl_->error;
}

std::optional<DigestRecord> StateDb::FindDigest(const std::string& digest) const {
  std::string value;
  if (!impl_->GetValue(impl_->digests, digest, &value).ok()) return std::nullopt;
  DigestRecord d;
  if (!DecodeDigest(value, &d)) return std::nullopt;
  ++impl_->digest_hits;
  return d;
}

Status StateDb::PutDigest(const std::string& digest, const DigestRecord& record) {
  Status s = FromRocks(
      impl_->db->Put(rocksdb::WriteOptions(), impl_->digests, digest, EncodeDigest(record)),
      "state: write");
  if (!s.ok()) impl_->SetError(s);
  return s;
}

uint64_t StateDb::digests_found() const { return impl_->digest_hits.load(); }

StateStats StateDb::stats() const {
  StateStats st;
  if (impl_->queue_store != nullptr) impl_->queue_store->FillStats(&st);
  st.hosts = impl_->next_host_id - 1;
  st.commits = impl_->commits.load();
  st.syncs = impl_->syncs.load();
  return st;
}

}  // namespace harvest::state
