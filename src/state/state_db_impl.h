// Private to src/state: StateDb's implementation, shared with its queue store
// (RocksQueueStore) and its seen store (SeenStore). It owns the database, the commit
// protocol (Committer) and a table per column family that carries logic (*_table.h); it
// keeps the seen, admitted and queue records itself, and what spans tables.
//
// Threads (state.h, "Thread-safety"): the I/O thread calls everything, except that the
// writer thread calls the digest, SimHash and page tables, PutStoredFetch and Sync; the
// committer thread belongs to the Committer, started by Open and stopped by the destructor.
// The members below are grouped by the thread that owns them.
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/dedup.h"
#include "frontier/url_item.h"
#include "state/committer.h"
#include "state/deferred_table.h"
#include "state/depth_table.h"
#include "state/digest_table.h"
#include "state/fingerprint_runs.h"
#include "state/host_record_table.h"
#include "state/internal.h"
#include "state/page_table.h"
#include "state/parked_table.h"
#include "state/schedule_table.h"
#include "state/simhash_table.h"
#include "state/state.h"

namespace harvest::state {

class RocksQueueStore;

// The exact seen store behind dedup::SeenSet (I/O thread): a fingerprint is in it when its
// URL was admitted (in `recent`, or ingested into the admitted set) or is done.
class SeenStore final : public dedup::SeenBackend {
 public:
  explicit SeenStore(StateDb::Impl* db) : db_(db) {}
  bool Contains(uint64_t fp) const override;
  // Ingested by StateDb::Commit() once the queue entries are written (see there).
  void Insert(uint64_t fp) override;

 private:
  StateDb::Impl* db_;
};

class StateDb::Impl {
 public:
  // Opens (or creates) the database (state_db_open.cc) and starts the committer thread.
  static Result<std::unique_ptr<Impl>> Open(const StateOptions& options);
  // Stops the committer thread (after it wrote what was handed over, unless writing fails)
  // and closes the database. The pending batch is not written: see Close().
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // ---- Any thread: set by Open, constant afterwards ----
  const StateOptions& options() const { return options_; }
  bool created() const { return created_; }
  int epoch_bits() const { return epoch_bits_; }
  dedup::SimHashVersion simhash_version() const { return simhash_version_; }
  std::string EngineStats() const;
  bool BackgroundWorkPending() const;
  Status MergeLevel0();

  // ---- The tables (each says which thread calls it) ----
  HostRecordTable& host_records() { return *host_records_; }
  ScheduleTable& schedule() { return *schedule_; }
  ParkedTable& parked() { return *parked_; }
  DeferredTable& deferred() { return *deferred_; }
  DepthTable& depths() { return *depths_; }
  SimHashTable& simhashes() { return *simhashes_; }
  DigestTable& digests() { return *digests_; }
  PageTable& pages() { return *pages_; }

  // ---- I/O thread: StateDb's operations (state.h) ----
  // A clean close: commits, syncs and ingests every admission, so nothing is re-added at
  // the next open. Errors are logged.
  void Close();
  dedup::SeenBackend* seen() { return seen_backend_.get(); }
  Status ForEachSeen(const std::function<void(uint64_t fp)>& fn) const;
  std::optional<SeenRecord> GetSeen(uint64_t fp) const;
  void MarkDone(const frontier::UrlItem& item, const SeenRecord& record);
  void UpdateQueued(const frontier::UrlItem& item);
  // Moves a done URL's schedule entry and its seen record's due time (StateDb::Reschedule).
  bool Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us);
  // Parks `item` under a new queue sequence (StateDb::Park).
  void Park(const frontier::UrlItem& item);
  // Defers `item` of host name `name` under a new queue sequence (StateDb::Defer).
  void Defer(std::string_view name, const frontier::UrlItem& item);
  // StateDb::Commit: hands the pending batch over; ingests once ingest_every admissions
  // have accumulated.
  Status Commit();
  StateStats stats() const;

  // ---- I/O thread: for SeenStore ----
  bool IsAdmittedOrDone(uint64_t fp) const;
  // In the admitted set's runs (an unreadable run sets the sticky error and answers true).
  bool IsIngested(uint64_t fp) const;
  void AddAdmitted(uint64_t fp) { recent_.Insert(fp); }

  // ---- I/O thread: for RocksQueueStore ----
  void AttachQueueStore(RocksQueueStore* store) { queue_store_ = store; }
  void DetachQueueStore(const RocksQueueStore* store);
  RocksQueueStore* queue_store() const { return queue_store_; }
  // A reader of the queues column family.
  std::unique_ptr<rocksdb::Iterator> NewQueueIterator(const rocksdb::ReadOptions& ro) const;
  // Loading: a queue entry left by an earlier run whose admission was not yet ingested into
  // the admitted set (the process died before the next ingest) is what makes the admission
  // durable: its fingerprint goes back into `recent`. Returns true when it did.
  bool ReadmitIfNotIngested(uint64_t seq, std::string_view item_value);
  // Raises the highest queue entry sequence given so far to `seq`.
  void RaiseLastQueueSeq(uint64_t seq) { last_queue_seq_ = std::max(last_queue_seq_, seq); }
  uint64_t last_queue_seq() const { return last_queue_seq_; }
  // Loading: counts the parked entries, raises the queue sequence past theirs and readmits
  // the fingerprints not yet ingested (like queue entries). Returns the highest sequence.
  Status LoadParked(uint64_t* max_seq);
  // Loading: the same for the deferred entries (and their count per host name, kept for
  // StateDb::DeferredHosts).
  Status LoadDeferred(uint64_t* max_seq);
  const std::map<std::string, uint64_t>& deferred_hosts() const { return deferred_hosts_; }
  // Adds the queue entry of a new item (store_host set, store_seq the newest sequence) to
  // the pending batch.
  void AddQueueEntry(const frontier::UrlItem& item);
  // Writes the pending batch and waits for it when it holds new queue entries, so that the
  // database holds every entry a host queue read may need. Returns the write error.
  Status WriteQueueEntries() { return committer_->WriteNeededByReads(); }
  // Hands the pending batch over once it holds options.max_batch_bytes.
  void MaybeCommit() { committer_->MaybeHandOver(); }

  // ---- Writer thread: a stored fetch's digest, SimHash and page records, in one write ----
  Result<uint64_t> PutStoredFetch(const StoredFetchRecords& records);

  // ---- Any thread ----
  Status Sync() { return committer_->Sync(); }
  // Records the first write error (sticky until a write succeeds).
  void SetError(const Status& s) { committer_->SetError(s); }
  Status error() const { return committer_->error(); }

 private:
  explicit Impl(const StateOptions& options) : options_(options) {}

  // Opening (state_db_open.cc).
  Status OpenDatabase();
  Status FindColumnFamilies();
  rocksdb::ColumnFamilyHandle* ColumnFamily(std::string_view name) const;
  // The committer and the tables, over the open database.
  void CreateTables();
  // Sets *new_database when the database held no crawl (no "version" key).
  Status CheckFormatVersion(bool* new_database);
  Status LoadSimHashVersion(bool new_database);
  Status LoadEpochBits();
  void LoadAdmittedThrough();
  Status OpenAdmittedRuns();
  Status MigrateAdmittedFamily();
  Status PutMeta(std::string_view key, std::string_view value);

  // Writes `recent_` as a run of the admitted set and records the watermark (in the pending
  // batch). Errors are sticky; `recent_` is kept for a retry.
  Status Ingest();
  Status IngestRecent();
  void AdvanceAdmittedThrough(uint64_t through);
  // Writes the queue entry of `item` (new or rewritten) into the pending batch.
  void PutQueueEntry(const frontier::UrlItem& item);
  // Sizes the block cache to twice the table files' index and filter blocks, within
  // [block_cache_bytes, block_cache_max_bytes] (StateOptions). I/O thread.
  void SizeBlockCache();

  // ---- Set by Open, constant afterwards (any thread; rocksdb::DB is thread-safe) ----
  const StateOptions options_;
  bool created_ = false;
  int epoch_bits_ = 20;  // meta "epoch_bits" (queue key epochs)
  dedup::SimHashVersion simhash_version_ = dedup::kNewestSimHash;  // meta "simhash_version"
  std::shared_ptr<rocksdb::Cache> block_cache_;  // every family's; sized by SizeBlockCache
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // owned; destroyed before db_
  rocksdb::ColumnFamilyHandle* queues_ = nullptr;
  rocksdb::ColumnFamilyHandle* seen_ = nullptr;
  // The `admitted` column family: the admitted set of databases written before the set
  // moved to `admitted_runs_`; emptied into it at open (MigrateAdmittedFamily).
  rocksdb::ColumnFamilyHandle* admitted_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  // The admitted set: sorted runs of fingerprints in <dir>/admitted-runs (fingerprint_runs.h).
  std::unique_ptr<FingerprintRuns> admitted_runs_;

  // ---- The commit protocol and the tables (created by Open; their threads: their headers) ----
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<HostRecordTable> host_records_;
  std::unique_ptr<ScheduleTable> schedule_;
  std::unique_ptr<ParkedTable> parked_;
  std::unique_ptr<DeferredTable> deferred_;
  std::map<std::string, uint64_t> deferred_hosts_;  // as loaded (LoadDeferred)
  std::unique_ptr<DepthTable> depths_;
  std::unique_ptr<SimHashTable> simhashes_;
  std::unique_ptr<DigestTable> digests_;
  std::unique_ptr<PageTable> pages_;

  // ---- I/O thread ----
  // Admitted fingerprints not yet in the admitted set (Ingest() adds them to it as one
  // sorted run). They are durable through their queue entries: every queue
  // entry with a sequence above `admitted_through_` has its fingerprint re-added here when
  // the queue store loads (after a crash; a clean close ingests first).
  dedup::FingerprintSet recent_;
  uint64_t admitted_through_ = 0;           // meta "admitted_through"
  uint64_t last_queue_seq_ = 0;             // highest queue entry sequence given so far
  size_t next_ingest_at_ = 0;               // recent_.size() that triggers Ingest()
  std::string scratch_;                     // encoding buffer
  RocksQueueStore* queue_store_ = nullptr;  // owned by the frontier
  std::unique_ptr<dedup::SeenBackend> seen_backend_;

  // ---- Any thread ----
  std::atomic<uint64_t> ingests_{0};
  std::atomic<uint64_t> table_metadata_bytes_{0};         // as SizeBlockCache last measured
  std::chrono::steady_clock::time_point cache_sized_at_;  // I/O thread
};

}  // namespace harvest::state
