// Private to src/state: the database handle shared by StateDb and its queue store, key
// layouts and record codecs.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "state/state.h"

namespace harvest::state {

// Bumped when a key or value layout changes incompatibly.
inline constexpr std::string_view kFormatVersion = "3";

// ---- byte codecs (little-endian varints; keys big-endian so they sort numerically) ----
void PutVarint(std::string* out, uint64_t v);
void PutSignedVarint(std::string* out, int64_t v);  // zigzag
void PutBytes(std::string* out, std::string_view s);
void PutBigEndian(std::string* out, uint64_t v, int bytes);

// Reads from a value; every getter returns false on truncated or malformed input.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Varint(uint64_t* v);
  bool SignedVarint(int64_t* v);
  bool Int(int* v);
  bool Bytes(std::string* s);
  bool Fixed(size_t n, std::string* s);
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
};
uint64_t ReadBigEndian(std::string_view s, int bytes);

// ---- keys ----
// queues: epoch (4) | host id (4) | priority class (1) | sequence (8), where the epoch is
// the sequence >> kEpochBits. Admissions arrive in random host order; with the epoch first,
// a compaction merges only entries of the same epoch (about 1 M admissions), and files of
// finished epochs never overlap new ones, so they are not rewritten again (RocksDB moves
// them down whole). A host's queue is read epoch by epoch.
// The epoch size is fixed when the database is created (StateOptions::queue_epoch_bits).
inline constexpr size_t kQueueKeySize = 17;
inline constexpr size_t kQueuePrefixSize = 8;  // epoch and host id
inline uint64_t EpochOf(int bits, uint64_t seq) { return seq >> bits; }
std::string QueueKey(int bits, uint32_t host, uint8_t cls, uint64_t seq);
// The same without an allocation (admission writes one per URL).
struct QueueKeyBytes {
  char data[kQueueKeySize];
  rocksdb::Slice slice() const { return {data, kQueueKeySize}; }
};
QueueKeyBytes MakeQueueKey(int bits, uint32_t host, uint8_t cls, uint64_t seq);
// Parses a queue key; false if it is not one.
bool ParseQueueKey(int bits, std::string_view key, uint32_t* host, uint8_t* cls,
                   uint64_t* seq);
// seen, admitted: fingerprint (8).
std::string SeenKey(uint64_t fp);
// hosts: 'n' id -> name (ids are per run, except for hosts with queue entries); 'p' name ->
// politeness; 'r' name -> robots.
std::string HostKey(char kind, std::string_view name);
std::string HostIdKey(uint32_t id);

// ---- values ----
std::string EncodeItem(const frontier::UrlItem& item);
void EncodeItemTo(const frontier::UrlItem& item, std::string* out);  // replaces *out
// store_host and store_seq are not part of the value, and neither is the host: the caller
// sets item->host before decoding (the URL may be stored without "scheme://host").
bool DecodeItem(std::string_view value, frontier::UrlItem* item);
// Only the fingerprint of an encoded item.
bool ItemFingerprint(std::string_view value, uint64_t* fp);
std::string EncodeSeen(const SeenRecord& r);
bool DecodeSeen(std::string_view value, SeenRecord* r);
std::string EncodePoliteness(const HostPoliteness& p);
bool DecodePoliteness(std::string_view value, HostPoliteness* p);
std::string EncodeRobots(const RobotsRecord& r);
bool DecodeRobots(std::string_view value, RobotsRecord* r);
std::string EncodeDigest(const DigestRecord& r);
bool DecodeDigest(std::string_view value, DigestRecord* r);

class QueueStoreImpl;

class StateDb::Impl {
 public:
  StateOptions options;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // owned; destroyed before db
  rocksdb::ColumnFamilyHandle* queues = nullptr;
  rocksdb::ColumnFamilyHandle* seen = nullptr;
  rocksdb::ColumnFamilyHandle* admitted = nullptr;
  rocksdb::ColumnFamilyHandle* hosts = nullptr;
  rocksdb::ColumnFamilyHandle* digests = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  bool created = false;

  // I/O thread: the pending batch.
  rocksdb::WriteBatch batch;
  // Admitted fingerprints not yet in the `admitted` column family (Ingest() moves them there
  // as one sorted table file). They are durable through their queue entries: every queue
  // entry with a sequence above `admitted_through` has its fingerprint re-added here when
  // the queue store loads (after a crash; a clean close ingests first).
  dedup::FingerprintSet recent;
  uint64_t admitted_through = 0;  // meta "admitted_through"
  uint64_t last_queue_seq = 0;    // highest queue entry sequence given so far
  int epoch_bits = 20;            // meta "epoch_bits" (queue key epochs)
  size_t next_ingest_at = 0;      // recent.size() that triggers Ingest()
  rocksdb::Options admitted_options;  // for the table file writer
  // New queue entries (QueueStore Push) in the pending batch: a disk read of a host queue
  // must commit first only when some exist (during a drain there are none, and a write per
  // refill would double its cost).
  uint64_t queue_puts_pending = 0;
  std::string scratch;  // encoding buffer of the I/O thread
  uint32_t next_host_id = 1;
  QueueStoreImpl* queue_store = nullptr;  // owned by the frontier
  std::unique_ptr<dedup::SeenBackend> seen_backend;

  // The committer thread writes the batches Commit() hands over, in order.
  std::thread committer;
  std::mutex commit_mu;
  std::condition_variable commit_cv;   // work, a retry or stopping
  std::condition_variable written_cv;  // a batch written or failed
  std::deque<rocksdb::WriteBatch> to_write;  // guarded by commit_mu
  std::vector<rocksdb::WriteBatch> spare;    // cleared, for reuse; guarded
  bool write_failed = false;                 // the head of to_write failed; guarded
  bool retry_requested = false;              // guarded
  bool stopping = false;                     // guarded
  bool resume_failed_logged = false;         // committer thread only

  std::atomic<uint64_t> commits{0}, syncs{0}, digest_hits{0}, ingests{0};
  mutable std::mutex error_mu;
  Status error;  // guarded by error_mu

  ~Impl();
  // Hands the pending batch to the committer thread (blocks while 4 wait); returns the
  // sticky error.
  Status Commit();
  // Until every handed-over batch is written (ok) or one failed (its error).
  Status WaitWritten();
  void StartCommitter();
  void StopCommitter();  // after writing what was handed over (unless writing fails)
  void CommitterLoop();
  void MaybeCommit();
  // Writes `recent` as a table file into the admitted column family and records the
  // watermark (in the pending batch). Errors are sticky; `recent` is kept for a retry.
  Status Ingest();
  void SetError(const Status& s);
  Status GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value) const;
  // Host id of `name`, assigned (and persisted in the batch) when new.
  uint32_t HostId(std::string_view name);
};

Status FromRocks(const rocksdb::Status& s, std::string_view what);

}  // namespace harvest::state
