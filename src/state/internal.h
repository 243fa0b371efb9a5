// Private to src/state: key layouts and record codecs (StateDb's implementation is in
// state/state_db_impl.h, its column families' tables in state/*_table.h).
#pragma once

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "state/state.h"

namespace rocksdb {
class ColumnFamilyHandle;
struct ColumnFamilyOptions;
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace harvest::state {

// Bumped when a key or value layout changes incompatibly.
inline constexpr std::string_view kFormatVersion = "5";
// Databases of these versions open too (StateDb raises them to kFormatVersion): version 4
// added the grouped parked entries (parked_table.h) and still reads version 3's single ones;
// version 5 added increments of the admission counters (merge operands in `hosts`,
// NewHostCountersOperator), which versions 3 and 4 never wrote. An older Harvest refuses a
// newer database rather than dropping the groups as malformed or failing on an operand.
inline bool IsReadableOlderFormatVersion(std::string_view version) {
  return version == "3" || version == "4";
}
// Installs on a column family's options what every opener of the database must name, the
// read-only StateReader too: the merge operators of `depths` and `hosts` (a write-ahead-log
// replay without one stops at the first merge record, and everything after it is lost to the
// opener) and the prefix extractors of `parked` and `deferred`, whose filters hold prefixes.
// Other families are left as they are (state_db_open.cc).
void InstallFamilyHooks(std::string_view family, rocksdb::ColumnFamilyOptions* options);
// The meta key of the crawl's SimHash version ("1" or "2"; StateDb::simhash_version).
inline constexpr std::string_view kSimHashVersionKey = "simhash_version";

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
  // The next n bytes, not copied (valid while the data is).
  bool View(size_t n, std::string_view* s);
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
bool ParseQueueKey(int bits, std::string_view key, uint32_t* host, uint8_t* cls, uint64_t* seq);
// seen, admitted: fingerprint (8).
std::string SeenKey(uint64_t fp);
// hosts: 'n' id -> name (ids are per run, except for hosts with queue entries); 'p' name ->
// politeness; 'r' name -> robots; 'b' name -> circuit breaker; 'u' host name -> http->https
// upgrade record (an empty value: none); 'i' name -> id (written when
// the host is evicted from RAM, so it keeps its id); 'c' + 8-byte admission host hash ->
// admission counters.
std::string HostKey(char kind, std::string_view name);
// 'o' name -> operator host override (an empty value: none).
inline constexpr char kOverrideKind = 'o';
// schedule: next due (8, big-endian wall µs) | fingerprint (8). simhash: sequence (8).
inline constexpr size_t kScheduleKeySize = 16;
std::string ScheduleKey(int64_t due_us, uint64_t fp);
std::string HostIdKey(uint32_t id);
std::string HostCountersKey(uint64_t host_hash);

// ---- values ----
std::string EncodeItem(const frontier::UrlItem& item);
void EncodeItemTo(const frontier::UrlItem& item, std::string* out);  // replaces *out
// store_host and store_seq are not part of the value, and neither is the host: the caller
// sets item->host before decoding (the URL may be stored without "scheme://host").
bool DecodeItem(std::string_view value, frontier::UrlItem* item);
// Only the fingerprint of an encoded item.
bool ItemFingerprint(std::string_view value, uint64_t* fp);
// schedule values: the host, then the item as EncodeItem writes it.
std::string EncodeScheduled(const frontier::UrlItem& item);
bool DecodeScheduled(std::string_view value, frontier::UrlItem* item);
std::string EncodeSimHash(const SimHashRecord& r);
bool DecodeSimHash(std::string_view value, SimHashRecord* r);
std::string EncodeDigest(const DigestRecord& r);
bool DecodeDigest(std::string_view value, DigestRecord* r);
std::string EncodeOverride(const HostOverride& o);
bool DecodeOverride(std::string_view value, HostOverride* o);

// A Status for a RocksDB status: `what` and RocksDB's message; Corruption, NotFound,
// ResourceExhausted (no space) or IOError.
Status FromRocks(const rocksdb::Status& s, std::string_view what);
// Reads the value of `key` in `cf`: NotFound when absent.
Status ReadValue(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                 std::string* value);

// An entry read out of a table of waiting URLs (parked, deferred) to be handed to the queues.
struct TakenEntry {
  std::string key;  // empty: deleted with an earlier item's key (a parked group's)
  frontier::UrlItem item;
};
// Deletes each taken entry in `batch`, then hands its item to `fn`: fn's queue push lands in
// the same batch (a hand-over happens only after a queue push), so a crash keeps exactly one
// of the two. Counts each off *count (never below 0); returns how many were handed over.
size_t HandOverTaken(std::vector<TakenEntry>* taken, rocksdb::WriteBatch* batch,
                     rocksdb::ColumnFamilyHandle* cf, uint64_t* count,
                     const std::function<void(frontier::UrlItem)>& fn);

}  // namespace harvest::state
