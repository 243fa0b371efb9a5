// StateDb: opening the database, the pending batch, seen/host/digest records.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "state/internal.h"
#include "state/queue_store_impl.h"

namespace harvest::state {
namespace {

constexpr const char* kColumnFamilies[] = {"queues", "seen", "hosts", "digests", "meta",
                                           "admitted"};

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
  // Admitted: recent, or ingested; done: in the seen column family (a done URL whose
  // admission was not yet ingested when the process died is only there).
  bool Contains(uint64_t fp) const override {
    if (db_->recent.Contains(fp)) return true;
    std::string value;
    const std::string key = SeenKey(fp);
    return db_->GetValue(db_->admitted, key, &value).ok() ||
           db_->GetValue(db_->seen, key, &value).ok();
  }
  // Ingested by StateDb::Commit() once the queue entries are written (see there).
  void Insert(uint64_t fp) override { db_->recent.Insert(fp); }

 private:
  StateDb::Impl* db_;
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
  StopCommitter();
  if (db) {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    handles.clear();
    db->Close();
  }
}

void StateDb::Impl::StartCommitter() { committer = std::thread([this] { CommitterLoop(); }); }

void StateDb::Impl::StopCommitter() {
  if (!committer.joinable()) return;
  {
    std::lock_guard lock(commit_mu);
    stopping = true;
  }
  commit_cv.notify_all();
  committer.join();
}

void StateDb::Impl::CommitterLoop() {
  std::unique_lock lock(commit_mu);
  for (;;) {
    commit_cv.wait(lock, [&] {
      return stopping || (!to_write.empty() && (!write_failed || retry_requested));
    });
    // Closing: what was handed over is still written, unless writing fails.
    if (to_write.empty() || (stopping && write_failed && !retry_requested)) return;
    retry_requested = false;
    rocksdb::WriteBatch& b = to_write.front();  // deque: stays put while others are added
    lock.unlock();
    const Status s = FromRocks(db->Write(rocksdb::WriteOptions(), &b), "state: write");
    if (!s.ok()) {
      // Kept at the head and retried at the next Commit() (e.g. once disk space returns);
      // later batches wait behind it. RocksDB refuses writes after a failed one until resumed.
      SetError(s);
      const rocksdb::Status resumed = db->Resume();
      if (!resumed.ok() && !resume_failed_logged) {
        // RocksDB 7.x keeps a failed write-ahead-log file failed (facebook/rocksdb#11643):
        // after a WAL write error no later write succeeds in this process.
        spdlog::error("state: the database cannot write again in this process ({}); the "
                      "crawl stays paused: stop it and run the same command again once the "
                      "disk has space — nothing written before the error is lost",
                      resumed.ToString());
        resume_failed_logged = true;
      }
    } else {
      ++commits;
      std::lock_guard error_lock(error_mu);
      if (!error.ok()) {
        spdlog::warn("state: writable again after: {}", error.ToString());
        error = Status::Ok();
      }
    }
    lock.lock();
    write_failed = !s.ok();
    if (s.ok()) {
      b.Clear();
      spare.push_back(std::move(b));
      to_write.pop_front();
    }
    written_cv.notify_all();
  }
}

Status StateDb::Impl::WaitWritten() {
  std::unique_lock lock(commit_mu);
  written_cv.wait(lock, [&] { return to_write.empty() || write_failed; });
  if (!write_failed) return Status::Ok();
  std::lock_guard error_lock(error_mu);
  return error.ok() ? Status::IOError("state: write failed") : error;
}

void StateDb::Impl::SetError(const Status& s) {
  std::lock_guard lock(error_mu);
  if (error.ok()) {
    spdlog::error("state: {}", s.ToString());
    error = s;
  }
}

Status StateDb::Impl::Commit() {
  // Handed to the committer thread, which writes batches in order: the I/O thread does not
  // wait for RocksDB (its write was half of admission's time on the I/O thread).
  constexpr size_t kMaxWaiting = 4;
  {
    std::unique_lock lock(commit_mu);
    if (write_failed) {
      retry_requested = true;
      commit_cv.notify_one();
    }
    if (batch.Count() > 0) {
      // Back-pressure: at most kMaxWaiting batches wait. While writes fail the batch stays
      // here and grows (the crawl takes no new work then).
      written_cv.wait(lock, [&] { return to_write.size() < kMaxWaiting || write_failed; });
      if (to_write.size() < kMaxWaiting) {
        to_write.push_back(std::move(batch));
        if (spare.empty()) {
          batch = rocksdb::WriteBatch();
        } else {
          batch = std::move(spare.back());
          spare.pop_back();
        }
        queue_puts_pending = 0;
        commit_cv.notify_one();
      }
    }
  }
  std::lock_guard error_lock(error_mu);
  return error;
}

void StateDb::Impl::MaybeCommit() {
  if (batch.GetDataSize() >= options.max_batch_bytes) (void)Commit();
}

Status StateDb::Impl::Ingest() {
  // Admissions used to be one seen-store insert each: a random 64-bit key into a skip list
  // and then through every compaction level, the largest cost of admission at scale
  // (docs/benchmarks.md, "Durable frontier at scale"). A sorted table file of the
  // admissions since the last ingest costs a fraction of that.
  next_ingest_at = recent.size() + std::max<size_t>(options.ingest_every / 4, 1);
  // Every queue entry up to `through` has its fingerprint in `recent` or ingested already.
  const uint64_t through = last_queue_seq;
  auto advance_watermark = [&] {
    if (through <= admitted_through) return;
    admitted_through = through;
    std::string v;
    PutBigEndian(&v, through, 8);
    batch.Put(meta, "admitted_through", v);
  };
  if (recent.size() == 0) {
    advance_watermark();
    return Status::Ok();
  }
  const std::filesystem::path file = options.dir / "admitted-ingest.sst";
  std::error_code ec;
  std::filesystem::remove(file, ec);
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), admitted_options, admitted);
  rocksdb::Status rs = writer.Open(file.string());
  std::string key;
  for (uint64_t fp : recent.SortedKeys()) {
    if (!rs.ok()) break;
    key.clear();
    PutBigEndian(&key, fp, 8);
    rs = writer.Put(key, rocksdb::Slice());
  }
  if (rs.ok()) rs = writer.Finish();
  if (rs.ok()) {
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    rs = db->IngestExternalFile(admitted, {file.string()}, io);
  }
  std::filesystem::remove(file, ec);
  Status s = FromRocks(rs, "state: ingesting admitted URLs");
  if (!s.ok()) {
    SetError(s);
    return s;
  }
  recent.Clear();  // in place: no second table while the first is freed
  next_ingest_at = std::max<size_t>(options.ingest_every, 1);
  ++ingests;
  advance_watermark();
  return Status::Ok();
}

Status StateDb::Impl::GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                               std::string* value) const {
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, rocksdb::Slice(key.data(), key.size()),
                              value);
  return FromRocks(s, "state: read");
}

uint32_t StateDb::Impl::HostId(std::string_view name) {
  // A new id, persisted with the pending batch, without looking the name up: a host with
  // queue entries from an earlier run keeps its id (the queue store's Load found it), and
  // any other host has no entry that could refer to an older one. (A lookup per new host
  // was a RocksDB read per host at admission.)
  const uint32_t id = next_host_id++;
  batch.Put(hosts, HostIdKey(id), std::string(name));
  std::string next;
  PutBigEndian(&next, next_host_id, 4);
  batch.Put(meta, "next_host", next);
  return id;
}

StateDb::StateDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StateDb::~StateDb() {
  if (impl_ && impl_->db) {
    // A clean close ingests every admission: nothing to re-add at the next open.
    Status s = impl_->Commit();
    if (s.ok()) s = Sync();
    if (s.ok()) s = impl_->Ingest();
    if (s.ok()) s = impl_->Commit();
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
  enum class Kind { kPlain, kQueues, kAdmitted };
  auto cf_options = [&](Kind kind, size_t buffer) {
    rocksdb::ColumnFamilyOptions cf;
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = cache;
    table.cache_index_and_filter_blocks = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    if (kind != Kind::kPlain) {
      // A host queue refill seeks once per host. Whole-file index and filter blocks of a
      // large queue store (tens of MB) do not fit the block cache and were re-read and
      // decompressed per seek (6.5 k refills/s at 5 M URLs); partitioned ones load 4 KiB
      // pieces (41 k/s). docs/benchmarks.md, "Durable frontier at scale". The admitted
      // set is as large and is probed by fingerprint (whole-key filters).
      table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
      table.partition_filters = true;
      table.metadata_block_size = 4096;
      table.pin_top_level_index_and_filter = true;
      table.enable_index_compression = false;
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    }
    if (kind == Kind::kQueues) {
      table.whole_key_filtering = false;
      cf.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(kQueuePrefixSize));
      // Memtable insert hints: the skip list remembers where the last insert with the same
      // prefix went; a host's items arrive in sequence order (prefix = epoch and host id).
      cf.memtable_insert_with_hint_prefix_extractor.reset(
          rocksdb::NewFixedPrefixTransform(kQueuePrefixSize));
    }
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    cf.write_buffer_size = buffer;
    cf.max_write_buffer_number = 3;
    // Admitted keys are random fingerprints with empty values: nothing to compress.
    cf.compression = kind == Kind::kAdmitted ? rocksdb::kNoCompression : BestCompression();
    cf.level_compaction_dynamic_level_bytes = true;
    cf.target_file_size_base = 64u << 20;
    cf.max_bytes_for_level_base = 256u << 20;
    if (kind == Kind::kAdmitted) {
      // Each table file ingested lands in L0 and overlaps everything (random fingerprints):
      // merging eight at a time instead of four rewrites the set less often.
      cf.level0_file_num_compaction_trigger = 8;
    }
    if (kind == Kind::kQueues) {
      // Entries are written once, read once and deleted once, and with the epoch key
      // prefix most of them are compacted once or twice; the compact item encoding leaves
      // little for LZ4, whose cost was a fifth of the compaction CPU.
      cf.compression = rocksdb::kNoCompression;
    }
    return cf;
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName,
                           cf_options(Kind::kPlain, 1u << 20));
  for (const char* name : kColumnFamilies) {
    const std::string_view n = name;
    const Kind kind = n == "queues" ? Kind::kQueues : n == "admitted" ? Kind::kAdmitted
                                                                      : Kind::kPlain;
    // seen (done records), hosts and meta take far fewer writes than the queues.
    const size_t buf = n == "queues" ? options.write_buffer_bytes
                       : n == "admitted" ? 1u << 20
                                         : options.write_buffer_bytes / 4;
    descriptors.emplace_back(name, cf_options(kind, buf));
  }
  impl->admitted_options = rocksdb::Options(db_options, descriptors.back().options);
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
  impl->admitted = impl->handles[6];
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
  std::string bits;
  if (impl->GetValue(impl->meta, "epoch_bits", &bits).ok() && bits.size() == 1) {
    impl->epoch_bits = static_cast<uint8_t>(bits[0]);
  } else {
    impl->epoch_bits = std::clamp(options.queue_epoch_bits, 1, 40);
    Status ws = FromRocks(impl->db->Put(rocksdb::WriteOptions(), impl->meta, "epoch_bits",
                                        std::string(1, static_cast<char>(impl->epoch_bits))),
                          "state: write");
    if (!ws.ok()) return ws;
  }
  std::string through;
  if (impl->GetValue(impl->meta, "admitted_through", &through).ok() && through.size() == 8) {
    impl->admitted_through = ReadBigEndian(through, 8);
  }
  impl->recent = dedup::FingerprintSet(options.ingest_every);
  impl->next_ingest_at = std::max<size_t>(options.ingest_every, 1);
  impl->seen_backend = std::make_unique<SeenStore>(impl.get());
  impl->StartCommitter();
  return std::unique_ptr<StateDb>(new StateDb(std::move(impl)));
}

bool StateDb::created() const { return impl_->created; }

dedup::SeenBackend* StateDb::seen() { return impl_->seen_backend.get(); }

Status StateDb::ForEachSeen(const std::function<void(uint64_t fp)>& fn) const {
  // Each fingerprint once: the admitted and seen column families merged in key order (a done
  // URL is in both unless its admission was not ingested yet), then `recent`.
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> a(impl_->db->NewIterator(ro, impl_->admitted));
  std::unique_ptr<rocksdb::Iterator> d(impl_->db->NewIterator(ro, impl_->seen));
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
    if (!impl_->recent.Contains(fp)) fn(fp);
  }
  if (Status s = FromRocks(a->status(), "state: reading the admitted set"); !s.ok()) return s;
  if (Status s = FromRocks(d->status(), "state: reading the seen store"); !s.ok()) return s;
  for (uint64_t fp : impl_->recent.SortedKeys()) fn(fp);
  return Status::Ok();
}

std::optional<SeenRecord> StateDb::GetSeen(uint64_t fp) const {
  (void)impl_->WaitWritten();  // read what was committed
  std::string value;
  const std::string key = SeenKey(fp);
  if (impl_->GetValue(impl_->seen, key, &value).ok()) {
    SeenRecord r;
    if (!DecodeSeen(value, &r)) return std::nullopt;
    return r;
  }
  if (impl_->recent.Contains(fp) || impl_->GetValue(impl_->admitted, key, &value).ok()) {
    return SeenRecord{};  // admitted, not done
  }
  return std::nullopt;
}

void StateDb::MarkDone(const frontier::UrlItem& item, const SeenRecord& record) {
  if (item.store_seq != 0) {
    impl_->batch.Delete(impl_->queues,
                        MakeQueueKey(impl_->epoch_bits, item.store_host,
                                     static_cast<uint8_t>(item.priority), item.store_seq)
                            .slice());
    if (impl_->queue_store != nullptr) impl_->queue_store->OnDone();
  }
  impl_->batch.Put(impl_->seen, SeenKey(item.fp), EncodeSeen(record));
  impl_->MaybeCommit();
}

void StateDb::UpdateQueued(const frontier::UrlItem& item) {
  if (item.store_seq == 0) return;
  EncodeItemTo(item, &impl_->scratch);
  impl_->batch.Put(impl_->queues,
                   MakeQueueKey(impl_->epoch_bits, item.store_host,
                                static_cast<uint8_t>(item.priority), item.store_seq)
                       .slice(),
                   impl_->scratch);
  impl_->MaybeCommit();
}

void StateDb::PutPoliteness(std::string_view host, const HostPoliteness& p) {
  impl_->batch.Put(impl_->hosts, HostKey('p', host), EncodePoliteness(p));
  impl_->MaybeCommit();
}

std::optional<HostPoliteness> StateDb::GetPoliteness(std::string_view host) const {
  (void)impl_->WaitWritten();  // read what was committed
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
  (void)impl_->WaitWritten();  // read what was committed
  std::string value;
  if (!impl_->GetValue(impl_->hosts, HostKey('r', host), &value).ok()) return std::nullopt;
  RobotsRecord r;
  if (!DecodeRobots(value, &r)) {
    spdlog::warn("state: unreadable robots record of {} ignored", host);
    return std::nullopt;
  }
  return r;
}

Status StateDb::Commit() {
  Status s = impl_->Commit();
  if (!s.ok() || impl_->recent.size() < impl_->next_ingest_at) return s;
  s = impl_->WaitWritten();
  if (!s.ok()) return s;
  // Fingerprints go to the admitted set only after their queue entries are durable: an
  // admitted fingerprint without its entry would be a URL refused as seen and never
  // fetched. Commit() runs between admissions (an admission's seen insert and its queue
  // entry are made in one step of the I/O thread), so every entry is in the batch just
  // written; the WAL is synced first because the ingested file is.
  if (impl_->options.sync) {
    s = FromRocks(impl_->db->SyncWAL(), "state: sync");
    if (!s.ok()) {
      impl_->SetError(s);
      return s;
    }
  }
  return impl_->Ingest();
}

void StateDb::AbandonForTesting() { impl_.reset(); }

std::string StateDb::EngineStats() const {
  std::string out;
  for (rocksdb::ColumnFamilyHandle* h : impl_->handles) {
    std::string cf;
    if (impl_->db->GetProperty(h, "rocksdb.cfstats-no-file-histogram", &cf)) out += cf;
  }
  return out;
}

Status StateDb::Sync() {
  // Everything committed so far: written by the committer thread, then the WAL fsynced.
  if (Status w = impl_->WaitWritten(); !w.ok()) return w;
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
  st.ingests = impl_->ingests.load();
  return st;
}

}  // namespace harvest::state
