// Private to src/state: StateDb's implementation, shared with its queue store
// (RocksQueueStore) and its seen store (SeenStore).
//
// Threads (state.h, "Thread-safety"): the I/O thread calls everything, except that the
// writer thread calls FindDigest, PutDigest and Sync; the committer thread, started by Open
// and joined by the destructor, runs CommitterLoop. The members below are grouped by the
// thread that owns them.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "dedup/dedup.h"
#include "frontier/url_item.h"
#include "state/internal.h"
#include "state/state.h"

namespace harvest::state {

class RocksQueueStore;

// The `depths` column family's merge operator: the minimum of the depths (depths.cc).
std::shared_ptr<rocksdb::MergeOperator> NewMinDepthOperator();
// The `parked` column family's prefix extractor: a key's (class, host) group (parked.cc).
std::shared_ptr<const rocksdb::SliceTransform> NewParkedGroupPrefix();

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

  // ---- I/O thread: StateDb's operations (state.h) ----
  // A clean close: commits, syncs and ingests every admission, so nothing is re-added at
  // the next open. Errors are logged.
  void Close();
  dedup::SeenBackend* seen() { return seen_backend_.get(); }
  Status ForEachSeen(const std::function<void(uint64_t fp)>& fn) const;
  std::optional<SeenRecord> GetSeen(uint64_t fp) const;
  void MarkDone(const frontier::UrlItem& item, const SeenRecord& record);
  void UpdateQueued(const frontier::UrlItem& item);
  // A host record (HostKey kind 'p' politeness, 'r' robots) into the pending batch.
  void PutHostRecord(char kind, std::string_view host, std::string value);
  // Reads a host record after the handed-over batches are written; false when absent.
  bool GetHostRecord(char kind, std::string_view host, std::string* value) const;
  // The same by full key (HostCountersKey).
  void PutRawHostRecord(const std::string& key, std::string value);
  bool GetRawHostRecord(const std::string& key, std::string* value) const;
  // StateDb::Commit: hands the pending batch over; ingests once ingest_every admissions
  // have accumulated.
  Status Commit();
  StateStats stats() const;

  // ---- I/O thread: for SeenStore ----
  bool IsAdmittedOrDone(uint64_t fp) const;
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
  // The name of persistent host id `id`; false when unknown.
  bool GetHostName(uint32_t id, std::string* name) const;
  // Host id of `name`, assigned (and persisted in the batch) when new.
  uint32_t NewHostId(std::string_view name);
  // The id a host evicted earlier had (RememberHostId), else a new one (NewHostId).
  uint32_t HostIdOf(std::string_view name);
  // The host leaves RAM: its id is kept in the pending batch, its name in the filter.
  void RememberHostId(std::string_view name, uint32_t id);
  // Hosts (names or admission hashes) evicted from RAM (a Bloom filter: may say yes wrongly).
  void NoteEvicted(std::string_view host) { evicted_.Insert(NameHash(host)); }
  void NoteEvicted(uint64_t key) { evicted_.Insert(key ^ kHashKeySalt); }
  bool MaybeEvicted(std::string_view host) const { return evicted_.MayContain(NameHash(host)); }
  bool MaybeEvicted(uint64_t key) const { return evicted_.MayContain(key ^ kHashKeySalt); }
  // Adds the queue entry of a new item (store_host set, store_seq the newest sequence) to
  // the pending batch.
  void AddQueueEntry(const frontier::UrlItem& item);
  // Writes the pending batch and waits for it when it holds new queue entries, so that the
  // database holds every entry a host queue read may need. Returns the write error.
  Status WriteQueueEntries();
  // Hands the pending batch over once it holds options.max_batch_bytes.
  void MaybeCommit();

  // ---- I/O thread: recrawl schedule (schedule.cc) ----
  void Schedule(const frontier::UrlItem& item, int64_t due_us);
  std::optional<int64_t> NextDue() const { return next_due_; }
  size_t TakeDue(int64_t now_us, size_t max, const std::function<void(frontier::UrlItem)>& fn);
  uint64_t scheduled() const { return scheduled_; }
  // Parked URLs (parked.cc): admitted URLs of hosts not in RAM, waiting for room.
  void Park(const frontier::UrlItem& item);
  size_t TakeParked(size_t max_hosts, int classes,
                    const std::function<void(frontier::UrlItem)>& fn);
  uint64_t parked() const { return parked_; }
  // Shallower paths (depths.cc).
  void NoteDepth(uint64_t fp, int depth);
  std::optional<int> NotedDepth(uint64_t fp) const;
  // Loading: counts the parked entries, raises the queue sequence past theirs and readmits
  // the fingerprints not yet ingested (like queue entries). Returns the highest sequence.
  Status LoadParked(uint64_t* max_seq);
  bool Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us);
  void LoadSchedule();  // at open: the earliest due time and the count

  // ---- Writer thread: near-duplicate index records (schedule.cc) ----
  Status PutSimHash(uint64_t seq, const SimHashRecord& record);
  std::optional<SimHashRecord> GetSimHash(uint64_t seq) const;
  Status TrimSimHashes(uint64_t below_seq);
  Status ForEachSimHash(size_t max,
                        const std::function<void(uint64_t, const SimHashRecord&)>& fn) const;

  // ---- Writer thread: page records (pages.cc); reads from any thread ----
  Result<uint64_t> AddPage(PageEntry page);
  Result<uint64_t> PutStoredFetch(const StoredFetchRecords& records);
  std::optional<PageEntry> GetPage(uint64_t id) const;
  PageScan ScanPages(const PageFilter& filter) const;
  uint64_t pages_added() const { return last_page_id_.load(); }
  void LoadLastPageId();  // at open
  rocksdb::ColumnFamilyHandle* hosts_family() const { return hosts_; }
  rocksdb::DB* rocks() const { return db_.get(); }
  // Waits for the handed-over batches (reads that must see the I/O thread's writes).
  Status WaitForWrites() const { return WaitWritten(); }

  // ---- Writer thread (and the I/O thread) ----
  std::optional<DigestRecord> FindDigest(const std::string& digest) const;
  Status PutDigest(const std::string& digest, const DigestRecord& record);
  uint64_t digests_found() const { return digest_hits_.load(); }
  Status Sync();

  // ---- Any thread ----
  // Records the first write error (sticky until a write succeeds).
  void SetError(const Status& s) EXCLUDES(error_mu_);
  Status error() const EXCLUDES(error_mu_);

 private:
  explicit Impl(const StateOptions& options)
      : options_(options), evicted_(std::max<size_t>(options.evicted_hosts, 1)) {}
  static uint64_t NameHash(std::string_view s) { return std::hash<std::string_view>()(s); }
  static constexpr uint64_t kHashKeySalt = 0x9e3779b97f4a7c15ull;

  // Opening (state_db_open.cc).
  Status OpenDatabase();
  Status FindColumnFamilies();
  rocksdb::ColumnFamilyHandle* ColumnFamily(std::string_view name) const;
  // Sets *new_database when the database held no crawl (no "version" key).
  Status CheckFormatVersion(bool* new_database);
  Status LoadSimHashVersion(bool new_database);
  Status LoadEpochBits();
  void LoadCounters();
  Status PutMeta(std::string_view key, std::string_view value);

  // The commit protocol (state_db_commit.cc).
  // Hands the pending batch to the committer thread (blocks while 4 wait); returns the
  // sticky error.
  Status HandOver() EXCLUDES(commit_mu_);
  // Until every handed-over batch is written (ok) or one failed (its error).
  Status WaitWritten() const EXCLUDES(commit_mu_);
  void StartCommitter();
  // After writing what was handed over (unless writing fails).
  void StopCommitter() EXCLUDES(commit_mu_);
  void CommitterLoop() EXCLUDES(commit_mu_);
  // Writes one handed-over batch (committer thread). A failure is made sticky, and RocksDB
  // is asked to resume writing.
  Status WriteHandedOver(rocksdb::WriteBatch* batch) EXCLUDES(commit_mu_);
  // Writes `recent_` as a table file into the admitted column family and records the
  // watermark (in the pending batch). Errors are sticky; `recent_` is kept for a retry.
  Status Ingest();
  Status IngestRecent();
  void AdvanceAdmittedThrough(uint64_t through);

  Status GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value) const;
  // Writes the queue entry of `item` (new or rewritten) into the pending batch.
  void PutQueueEntry(const frontier::UrlItem& item);

  // ---- Set by Open, constant afterwards (any thread; rocksdb::DB is thread-safe) ----
  const StateOptions options_;
  bool created_ = false;
  int epoch_bits_ = 20;  // meta "epoch_bits" (queue key epochs)
  dedup::SimHashVersion simhash_version_ = dedup::kNewestSimHash;  // meta "simhash_version"
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // owned; destroyed before db_
  rocksdb::ColumnFamilyHandle* queues_ = nullptr;
  rocksdb::ColumnFamilyHandle* seen_ = nullptr;
  rocksdb::ColumnFamilyHandle* admitted_ = nullptr;
  rocksdb::ColumnFamilyHandle* hosts_ = nullptr;
  rocksdb::ColumnFamilyHandle* digests_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* schedule_ = nullptr;
  rocksdb::ColumnFamilyHandle* parked_cf_ = nullptr;
  uint64_t parked_ = 0;        // entries in the parked column family
  std::string parked_cursor_;  // where TakeParked goes on (wraps to the start)
  rocksdb::ColumnFamilyHandle* simhash_ = nullptr;
  rocksdb::ColumnFamilyHandle* pages_ = nullptr;
  rocksdb::ColumnFamilyHandle* depths_ = nullptr;
  // Recent NoteDepth calls, direct-mapped by fingerprint: a repeat at no smaller depth
  // writes nothing, and a note not yet written is found here (depths.cc).
  struct NotedSlot {
    uint64_t fp = 0;
    int depth = 0;
  };
  static constexpr size_t kNotedSlots = 1u << 16;
  std::vector<NotedSlot> noted_ = std::vector<NotedSlot>(kNotedSlots);
  rocksdb::Options admitted_options_;  // for the table file writer of Ingest()

  // ---- I/O thread ----
  // The pending batch.
  rocksdb::WriteBatch batch_;
  // Admitted fingerprints not yet in the `admitted` column family (Ingest() moves them there
  // as one sorted table file). They are durable through their queue entries: every queue
  // entry with a sequence above `admitted_through_` has its fingerprint re-added here when
  // the queue store loads (after a crash; a clean close ingests first).
  dedup::FingerprintSet recent_;
  std::optional<int64_t> next_due_;  // earliest schedule entry
  uint64_t scheduled_ = 0;           // schedule entries
  uint64_t admitted_through_ = 0;    // meta "admitted_through"
  uint64_t last_queue_seq_ = 0;      // highest queue entry sequence given so far
  size_t next_ingest_at_ = 0;        // recent_.size() that triggers Ingest()
  // New queue entries (RocksQueueStore::Push) in the pending batch: a disk read of a host
  // queue must commit first only when some exist (during a drain there are none, and a
  // write per refill would double its cost).
  uint64_t queue_puts_pending_ = 0;
  std::string scratch_;  // encoding buffer
  uint32_t next_host_id_ = 1;
  dedup::BloomFilter evicted_;              // hosts evicted from RAM (names and admission hashes)
  RocksQueueStore* queue_store_ = nullptr;  // owned by the frontier
  std::unique_ptr<dedup::SeenBackend> seen_backend_;

  // ---- Committer thread: the hand-over, guarded by commit_mu_ ----
  // The committer thread writes the batches HandOver() queues, in order.
  std::thread committer_;  // started by Open, joined by StopCommitter (I/O thread)
  mutable Mutex commit_mu_;
  CondVar commit_cv_;           // work, a retry or stopping
  mutable CondVar written_cv_;  // a batch written or failed
  std::deque<rocksdb::WriteBatch> to_write_ GUARDED_BY(commit_mu_);
  std::vector<rocksdb::WriteBatch> spare_ GUARDED_BY(commit_mu_);  // cleared, for reuse
  bool write_failed_ GUARDED_BY(commit_mu_) = false;               // the head of to_write_ failed
  bool retry_requested_ GUARDED_BY(commit_mu_) = false;
  bool stopping_ GUARDED_BY(commit_mu_) = false;
  // Committer thread only.
  bool resume_failed_logged_ = false;

  // ---- Any thread ----
  std::atomic<uint64_t> commits_{0}, syncs_{0}, ingests_{0};
  std::atomic<uint64_t> last_page_id_{0};  // written by the writer thread only
  uint64_t pages_trimmed_below_ = 1;       // writer thread
  mutable std::atomic<uint64_t> digest_hits_{0};
  mutable Mutex error_mu_ ACQUIRED_AFTER(commit_mu_);  // WaitWritten holds both
  Status error_ GUARDED_BY(error_mu_);
};

}  // namespace harvest::state
