// StateDb::Impl::Open: RocksDB options per column family, opening, the committer and the
// tables over the open database, the format version and the counters kept in `meta`.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "state/state_db_impl.h"

namespace harvest::state {
namespace {

// How a column family is tuned.
enum class Tuning {
  kPlain,     // small point reads and writes
  kQueues,    // host queues: read by prefix (epoch and host id), written in key order
  kAdmitted,  // an older database's admitted set, emptied at open (admitted-runs holds it)
  kParked,    // parked URLs: written once at random places (by host), read once, deleted
};

struct ColumnFamilySpec {
  const char* name;
  Tuning tuning;
};

// The column families (state.h lists what each holds), in creation order.
constexpr char kQueues[] = "queues";
constexpr char kSeen[] = "seen";
constexpr char kHosts[] = "hosts";
constexpr char kDigests[] = "digests";
constexpr char kMeta[] = "meta";
constexpr char kAdmitted[] = "admitted";
constexpr char kSchedule[] = "schedule";
constexpr char kSimHash[] = "simhash";
constexpr char kParked[] = "parked";
constexpr char kPages[] = "pages";
constexpr char kDepths[] = "depths";
constexpr char kDeferred[] = "deferred";
constexpr ColumnFamilySpec kColumnFamilies[] = {
    {kQueues, Tuning::kQueues},  {kSeen, Tuning::kPlain},    {kHosts, Tuning::kPlain},
    {kDigests, Tuning::kPlain},  {kMeta, Tuning::kPlain},    {kAdmitted, Tuning::kAdmitted},
    {kSchedule, Tuning::kPlain}, {kSimHash, Tuning::kPlain}, {kParked, Tuning::kParked},
    {kPages, Tuning::kPlain},    {kDepths, Tuning::kPlain},  {kDeferred, Tuning::kPlain},
};

rocksdb::CompressionType BestCompression() {
  for (rocksdb::CompressionType t : rocksdb::GetSupportedCompressions()) {
    if (t == rocksdb::kLZ4Compression) return t;
  }
  for (rocksdb::CompressionType t : rocksdb::GetSupportedCompressions()) {
    if (t == rocksdb::kSnappyCompression) return t;
  }
  return rocksdb::kNoCompression;
}

rocksdb::DBOptions DatabaseOptions(const StateOptions& options) {
  rocksdb::DBOptions db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  db.max_background_jobs = 2;
  db.bytes_per_sync = 1u << 20;
  db.db_write_buffer_size = 4 * options.write_buffer_bytes;
  db.max_total_wal_size = 4 * options.write_buffer_bytes;
  db.keep_log_file_num = 3;
  db.max_open_files = 1000;
  return db;
}

rocksdb::BlockBasedTableOptions TableOptions(Tuning tuning,
                                             const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Partitioned index and filter blocks in every family. A whole-file filter of a 64 MB
  // table file is megabytes; the families' filters outgrow the cache's high-priority half
  // (RocksDB's default: index and filter blocks cached with high priority, half of the
  // capacity) as the crawl grows, and then a point lookup of seen, digests or depths
  // records re-reads and re-checksums a whole filter from the file (issue 43: 17% of a
  // 1 M-host crawl in XXH3 under FullFilterKeyMayMatch, 23% in the kernel copying file
  // data). Partitions load 4 KiB pieces; only the top-level index of each file is pinned.
  // A host queue refill seeks once per host: whole-file index blocks of a large queue store
  // did the same (6.5 k refills/s at 5 M URLs; 41 k/s partitioned). docs/benchmarks.md,
  // "Durable frontier at scale" and "State at scale".
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.partition_filters = true;
  table.metadata_block_size = 4096;
  table.pin_top_level_index_and_filter = true;
  table.enable_index_compression = false;
  // Bloom filters in every family: most point lookups are of absent keys (a payload digest
  // not stored before, a host or URL never seen), and without a filter each such Get reads
  // and decompresses an index and a data block per level that may hold it.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // Queue and parked entries are only ever read by prefix (a host's, a group's) through
  // iterators: their filters hold prefixes alone. Whole keys there cost a filter
  // entry per URL (~1.25 bytes per key at 10 bits per key: at 100 M parked URLs on the order
  // of 100 MB of filter blocks to build in every compaction and to cache, an estimate) that
  // no lookup ever asks.
  if (tuning == Tuning::kQueues || tuning == Tuning::kParked) table.whole_key_filtering = false;
  return table;
}

// The compression of a column family's table files.
rocksdb::CompressionType CompressionFor(Tuning tuning) {
  switch (tuning) {
    case Tuning::kAdmitted:
      // Random fingerprints with empty values: nothing to compress.
      return rocksdb::kNoCompression;
    case Tuning::kQueues:
      // Entries are written once, read once and deleted once, and with the epoch key
      // prefix most of them are compacted once or twice; the compact item encoding leaves
      // little for LZ4, which would cost a fifth of the compaction CPU.
      return rocksdb::kNoCompression;
    case Tuning::kParked:
    case Tuning::kPlain:
      break;
  }
  return BestCompression();
}

// Memtable size: seen (done records), hosts and meta take far fewer writes than the
// queues; the admitted set is written as table files, not through the memtable.
size_t WriteBufferFor(Tuning tuning, const StateOptions& options) {
  switch (tuning) {
    case Tuning::kQueues:
    case Tuning::kParked:
      return options.write_buffer_bytes;
    case Tuning::kAdmitted:
      return 1u << 20;
    case Tuning::kPlain:
      break;
  }
  return options.write_buffer_bytes / 4;
}

rocksdb::ColumnFamilyOptions FamilyOptions(Tuning tuning, size_t write_buffer,
                                           const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions cf;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(TableOptions(tuning, cache)));
  if (tuning == Tuning::kQueues) {
    cf.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(kQueuePrefixSize));
    // Memtable insert hints: the skip list remembers where the last insert with the same
    // prefix went; a host's items arrive in sequence order (prefix = epoch and host id).
    cf.memtable_insert_with_hint_prefix_extractor.reset(
        rocksdb::NewFixedPrefixTransform(kQueuePrefixSize));
  }
  cf.write_buffer_size = write_buffer;
  cf.max_write_buffer_number = 3;
  cf.compression = CompressionFor(tuning);
  cf.level_compaction_dynamic_level_bytes = true;
  cf.target_file_size_base = 64u << 20;
  cf.max_bytes_for_level_base = 256u << 20;
  if (tuning == Tuning::kParked) {
    // Parked URLs arrive in random host order and each is read and deleted once: leveled
    // compaction rewrote every entry ~14 times at 100 M URLs over 2 M hosts, universal
    // (sorted runs merged by size) ~5, a third less admission CPU (docs/benchmarks.md,
    // "At 100 M URLs"). A leveled family of an older database opens as it is.
    cf.compaction_style = rocksdb::kCompactionStyleUniversal;
    // Merging at least four sorted runs at a time, once eight are there, rather than two once
    // four are: with the admitted set out of RocksDB the compaction threads were free to
    // merge `parked` as eagerly as it allows, pairwise (write amplification 6.8 at 100 M
    // URLs); at 20 M URLs this halves its compaction CPU (docs/benchmarks.md, "An admitted
    // set of sorted runs"). A taking scan meets a few more runs.
    cf.level0_file_num_compaction_trigger = 8;
    cf.compaction_options_universal.min_merge_width = 4;
  }
  return cf;
}

// The default column family (unused, but RocksDB requires it) and ours.
std::vector<rocksdb::ColumnFamilyDescriptor> Descriptors(
    const StateOptions& options, const std::shared_ptr<rocksdb::Cache>& cache) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName,
                           FamilyOptions(Tuning::kPlain, 1u << 20, cache));
  for (const ColumnFamilySpec& spec : kColumnFamilies) {
    descriptors.emplace_back(
        spec.name, FamilyOptions(spec.tuning, WriteBufferFor(spec.tuning, options), cache));
    InstallFamilyHooks(spec.name, &descriptors.back().options);
    const std::string_view name = spec.name;
    if (name == kSeen || name == kHosts || name == kDigests || name == kDepths) {
      // Point reads of mostly absent keys (a new payload's digest, a link never reached by a
      // shorter path, a host never evicted): a Bloom filter over the memtable's keys answers
      // them without a skip-list search (RocksDB's table filters only cover table files).
      descriptors.back().options.memtable_prefix_bloom_size_ratio = 0.05;
      descriptors.back().options.memtable_whole_key_filtering = true;
    }
  }
  return descriptors;
}

Status CreateDirectory(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::InvalidArgument("state: no directory given");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("state: cannot create " + dir.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

void InstallFamilyHooks(std::string_view family, rocksdb::ColumnFamilyOptions* options) {
  if (family == kDepths) options->merge_operator = NewMinDepthOperator();
  if (family == kHosts) options->merge_operator = NewHostCountersOperator();
  if (family == kParked) options->prefix_extractor = NewParkedGroupPrefix();
  if (family == kDeferred) options->prefix_extractor = NewDeferredHostPrefix();
}

Result<std::unique_ptr<StateDb::Impl>> StateDb::Impl::Open(const StateOptions& options) {
  if (Status s = CreateDirectory(options.dir); !s.ok()) return s;
  std::unique_ptr<Impl> impl(new Impl(options));
  std::error_code ec;
  impl->created_ = !std::filesystem::exists(options.dir / "CURRENT", ec);
  if (Status s = impl->OpenDatabase(); !s.ok()) return s;
  if (Status s = impl->OpenAdmittedRuns(); !s.ok()) return s;
  impl->CreateTables();
  bool new_database = false;
  if (Status s = impl->CheckFormatVersion(&new_database); !s.ok()) return s;
  if (Status s = impl->LoadSimHashVersion(new_database); !s.ok()) return s;
  if (Status s = impl->LoadEpochBits(); !s.ok()) return s;
  impl->host_records_->Load();
  impl->LoadAdmittedThrough();
  impl->schedule_->Load();
  impl->pages_->Load();
  impl->recent_ = dedup::FingerprintSet(options.ingest_every);
  impl->next_ingest_at_ = std::max<size_t>(options.ingest_every, 1);
  impl->seen_backend_ = std::make_unique<SeenStore>(impl.get());
  impl->SizeBlockCache();  // a resumed crawl's tables
  impl->cache_sized_at_ = std::chrono::steady_clock::now();
  impl->committer_->Start();
  return impl;
}

Status StateDb::Impl::OpenDatabase() {
  const rocksdb::DBOptions db_options = DatabaseOptions(options_);
  block_cache_ = rocksdb::NewLRUCache(options_.block_cache_bytes);
  const std::vector<rocksdb::ColumnFamilyDescriptor> descriptors =
      Descriptors(options_, block_cache_);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs;
  if (created_) {
    // A new database: opened with the default family, then ours created in one call.
    // RocksDB writes (and reads back) its OPTIONS file once per family DB::Open creates,
    // but once for all of a CreateColumnFamilies call (docs/benchmarks.md "Stop 28"). A
    // crash in between leaves families missing, which the next open creates.
    rs = rocksdb::DB::Open(db_options, options_.dir.string(), {descriptors.front()}, &handles_,
                           &raw);
    if (rs.ok()) {
      std::vector<rocksdb::ColumnFamilyHandle*> created;
      rs = raw->CreateColumnFamilies(
          std::vector<rocksdb::ColumnFamilyDescriptor>(descriptors.begin() + 1, descriptors.end()),
          &created);
      handles_.insert(handles_.end(), created.begin(), created.end());
      if (!rs.ok()) {
        for (rocksdb::ColumnFamilyHandle* h : handles_) raw->DestroyColumnFamilyHandle(h);
        handles_.clear();
        delete raw;
        raw = nullptr;
      }
    }
  } else {
    rs = rocksdb::DB::Open(db_options, options_.dir.string(), descriptors, &handles_, &raw);
  }
  if (!rs.ok()) {
    std::string hint = rs.ToString().find("lock") != std::string::npos
                           ? " (is another harvest process using this crawl directory?)"
                           : "";
    return Status::IOError("state: cannot open " + options_.dir.string() + ": " + rs.ToString() +
                           hint);
  }
  db_.reset(raw);
  return FindColumnFamilies();
}

Status StateDb::Impl::FindColumnFamilies() {
  for (const ColumnFamilySpec& spec : kColumnFamilies) {
    if (ColumnFamily(spec.name) == nullptr) {
      return Status::Internal("state: " + options_.dir.string() + ": no column family " +
                              spec.name + " after open");
    }
  }
  queues_ = ColumnFamily(kQueues);
  seen_ = ColumnFamily(kSeen);
  admitted_ = ColumnFamily(kAdmitted);
  meta_ = ColumnFamily(kMeta);
  return Status::Ok();
}

Status StateDb::Impl::OpenAdmittedRuns() {
  FingerprintRuns::Options o;
  o.dir = options_.dir / "admitted-runs";
  o.sync = options_.sync;
  Result<std::unique_ptr<FingerprintRuns>> runs = FingerprintRuns::Open(o);
  if (!runs.ok()) return runs.status();
  admitted_runs_ = std::move(*runs);
  return MigrateAdmittedFamily();
}

// A database written before the admitted set moved out of RocksDB holds it in the `admitted`
// family: its fingerprints become runs (durable first), then the family is emptied. A crash in
// between moves them again at the next open; the runs' merges drop the repeats.
Status StateDb::Impl::MigrateAdmittedFamily() {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2u << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, admitted_));
  it->SeekToFirst();
  if (!it->Valid()) return FromRocks(it->status(), "state: reading the admitted family");
  std::vector<uint64_t> chunk;
  uint64_t moved = 0;
  auto add = [&]() {
    Status s = admitted_runs_->Add(chunk);
    moved += chunk.size();
    chunk.clear();
    return s;
  };
  for (; it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (k.size() != 8) continue;
    chunk.push_back(ReadBigEndian(std::string_view(k.data(), 8), 8));
    if (chunk.size() == (1u << 20)) {
      if (Status s = add(); !s.ok()) return s;
    }
  }
  if (Status s = FromRocks(it->status(), "state: reading the admitted family"); !s.ok()) return s;
  if (Status s = add(); !s.ok()) return s;
  it.reset();
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  const std::string begin(8, '\0'), end(9, '\xff');  // every 8-byte key
  if (Status s = FromRocks(db_->DeleteRange(wo, admitted_, begin, end), "state: write"); !s.ok()) {
    return s;
  }
  (void)db_->CompactRange(rocksdb::CompactRangeOptions(), admitted_, nullptr, nullptr);
  spdlog::info("state: {} admitted fingerprints moved from the admitted column family into {}",
               moved, (options_.dir / "admitted-runs").string());
  return Status::Ok();
}

void StateDb::Impl::CreateTables() {
  rocksdb::DB* db = db_.get();
  committer_ = std::make_unique<Committer>(db, options_.max_batch_bytes, options_.sync);
  Committer* c = committer_.get();
  host_records_ =
      std::make_unique<HostRecordTable>(db, ColumnFamily(kHosts), meta_, c, options_.evicted_hosts);
  schedule_ = std::make_unique<ScheduleTable>(db, ColumnFamily(kSchedule), c);
  parked_ = std::make_unique<ParkedTable>(db, ColumnFamily(kParked), c);
  c->SetBeforeHandOver([p = parked_.get()] { p->Flush(); });
  deferred_ = std::make_unique<DeferredTable>(db, ColumnFamily(kDeferred), c);
  depths_ = std::make_unique<DepthTable>(db, ColumnFamily(kDepths), c);
  simhashes_ = std::make_unique<SimHashTable>(db, ColumnFamily(kSimHash), c);
  digests_ = std::make_unique<DigestTable>(db, ColumnFamily(kDigests), c);
  pages_ = std::make_unique<PageTable>(db, ColumnFamily(kPages), c, options_.pages_max);
}

rocksdb::ColumnFamilyHandle* StateDb::Impl::ColumnFamily(std::string_view name) const {
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    if (h->GetName() == name) return h;
  }
  return nullptr;
}

Status StateDb::Impl::CheckFormatVersion(bool* new_database) {
  std::string version;
  Status s = ReadValue(db_.get(), meta_, "version", &version);
  *new_database = s.code() == Status::Code::kNotFound;
  if (*new_database) return PutMeta("version", kFormatVersion);
  if (!s.ok()) return s;
  if (version == kFormatVersion) return Status::Ok();
  if (IsReadableOlderFormatVersion(version)) return PutMeta("version", kFormatVersion);
  return Status::InvalidArgument("state: " + options_.dir.string() + " has format version " +
                                 version + "; this harvest reads version " +
                                 std::string(kFormatVersion));
}

// The SimHash version is fixed when the database is created (docs/architecture.md §1.4): a
// new database takes the newest; one that holds a crawl but no "simhash_version" key was written
// before version 2 existed, so its fingerprints are version 1, which is recorded now so that
// it stays 1.
Status StateDb::Impl::LoadSimHashVersion(bool new_database) {
  std::string value;
  Status s = ReadValue(db_.get(), meta_, kSimHashVersionKey, &value);
  if (s.ok()) {
    if (value == "1" || value == "2") {
      simhash_version_ = static_cast<dedup::SimHashVersion>(value[0] - '0');
      return Status::Ok();
    }
    return Status::InvalidArgument("state: " + options_.dir.string() + " has SimHash version " +
                                   value + "; this harvest computes versions 1 and 2");
  }
  if (s.code() != Status::Code::kNotFound) return s;
  simhash_version_ = new_database ? dedup::kNewestSimHash : dedup::SimHashVersion::kV1;
  return PutMeta(kSimHashVersionKey, std::to_string(static_cast<int>(simhash_version_)));
}

// The epoch size is fixed when the database is created (StateOptions::queue_epoch_bits).
Status StateDb::Impl::LoadEpochBits() {
  std::string bits;
  if (ReadValue(db_.get(), meta_, "epoch_bits", &bits).ok() && bits.size() == 1) {
    epoch_bits_ = static_cast<uint8_t>(bits[0]);
    return Status::Ok();
  }
  epoch_bits_ = std::clamp(options_.queue_epoch_bits, 1, 40);
  return PutMeta("epoch_bits", std::string(1, static_cast<char>(epoch_bits_)));
}

void StateDb::Impl::LoadAdmittedThrough() {
  std::string through;
  if (ReadValue(db_.get(), meta_, "admitted_through", &through).ok() && through.size() == 8) {
    admitted_through_ = ReadBigEndian(through, 8);
  }
}

// Writes one meta value at once (Open runs before the committer thread starts).
Status StateDb::Impl::PutMeta(std::string_view key, std::string_view value) {
  return FromRocks(db_->Put(rocksdb::WriteOptions(), meta_, rocksdb::Slice(key.data(), key.size()),
                            rocksdb::Slice(value.data(), value.size())),
                   "state: write");
}

}  // namespace harvest::state
