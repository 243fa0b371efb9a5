// Private to src/state: the database handle shared by StateDb and its queue store, key
// layouts and record codecs.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "state/state.h"

namespace harvest::state {

// Bumped when a key or value layout changes incompatibly.
inline constexpr std::string_view kFormatVersion = "1";

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
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
};
uint64_t ReadBigEndian(std::string_view s, int bytes);

// ---- keys ----
// queues: host id (4) | priority class (1) | sequence (8).
inline constexpr size_t kQueueKeySize = 13;
std::string QueueKey(uint32_t host, uint8_t cls, uint64_t seq);
std::string QueuePrefix(uint32_t host);
// seen: fingerprint (8).
std::string SeenKey(uint64_t fp);
// hosts: 'i' name -> id; 'n' id -> name; 'p' name -> politeness; 'r' name -> robots.
std::string HostKey(char kind, std::string_view name);
std::string HostIdKey(uint32_t id);

// ---- values ----
std::string EncodeItem(const frontier::UrlItem& item);
// host, store_host and store_seq are not part of the value: the caller fills them.
bool DecodeItem(std::string_view value, frontier::UrlItem* item);
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
  rocksdb::ColumnFamilyHandle* hosts = nullptr;
  rocksdb::ColumnFamilyHandle* digests = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  bool created = false;

  // I/O thread: the pending batch and what it inserted into the seen store (read-your-writes).
  rocksdb::WriteBatch batch;
  dedup::FingerprintSet pending_seen;
  // Seen inserts (record kQueued) of the pending batch, kept out of `batch` and written
  // first, in key order, by Commit(): sorted inserts continue from the previous insert's
  // position in the memtable's skip list instead of descending from the top (measured:
  // 11.3 -> 9.8 CPU-us per admission at 1 M URLs; see Commit).
  std::vector<uint64_t> seen_inserts;
  // New queue entries (QueueStore Push) in the pending batch: a disk read of a host queue
  // must commit first only when some exist (during a drain there are none, and a write per
  // refill would double its cost).
  uint64_t queue_puts_pending = 0;
  uint32_t next_host_id = 1;
  QueueStoreImpl* queue_store = nullptr;  // owned by the frontier
  std::unique_ptr<dedup::SeenBackend> seen_backend;

  std::atomic<uint64_t> commits{0}, syncs{0}, digest_hits{0};
  mutable std::mutex error_mu;
  Status error;  // guarded by error_mu

  ~Impl();
  Status Commit();
  void MaybeCommit();
  void SetError(const Status& s);
  Status GetValue(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value) const;
  // Host id of `name`, assigned (and persisted in the batch) when new.
  uint32_t HostId(std::string_view name);
};

Status FromRocks(const rocksdb::Status& s, std::string_view what);

}  // namespace harvest::state
