// Private to src/state: the per-host records, the `hosts` column family (state.h;
// internal.h, HostKey): politeness, robots, circuit breaker, admission counters and
// operator overrides by host, and the persistent host ids of the queue keys ('n' id ->
// name, 'i' name -> id of a host evicted from RAM; the next id in meta "next_host"). A
// Bloom filter remembers the hosts evicted from RAM, whose records may be on disk.
//
// I/O thread only: its writes go into the committer's pending batch, and its reads wait
// for the batches handed over before them.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dedup/dedup.h"
#include "frontier/url_item.h"
#include "state/committer.h"
#include "state/state.h"

namespace harvest::state {

// The `hosts` family's merge operator (every opener of the family must install it): an
// operand adds to a counters record's admitted count (HostRecordTable::AddAdmitted); the
// family's other records are only ever put.
std::shared_ptr<rocksdb::MergeOperator> NewHostCountersOperator();

class HostRecordTable {
 public:
  // `db`, `hosts` and `meta` (for the next host id) outlive the table; writes go into
  // `committer`'s pending batch; the eviction filter is sized for `evicted_hosts` hosts.
  HostRecordTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hosts,
                  rocksdb::ColumnFamilyHandle* meta, Committer* committer, size_t evicted_hosts);

  // At open: the next host id.
  void Load();

  // ---- Records (state.h); an unreadable record is logged and read as absent ----
  void PutPoliteness(std::string_view host, const HostPoliteness& p);
  std::optional<HostPoliteness> GetPoliteness(std::string_view host) const;
  void PutRobots(std::string_view host, const RobotsRecord& r);
  std::optional<RobotsRecord> GetRobots(std::string_view host) const;
  void PutBreaker(std::string_view host, const BreakerRecord& b);
  std::optional<BreakerRecord> GetBreaker(std::string_view host) const;
  void PutUpgrade(std::string_view name, const UpgradeRecord& u);
  std::optional<UpgradeRecord> GetUpgrade(std::string_view name) const;
  void PutCounters(uint64_t host_hash, const frontier::HostCounters& c);
  std::optional<frontier::HostCounters> GetCounters(uint64_t host_hash) const;
  // Adds `n` to the host's admitted count without reading its counters: a merge operand
  // (NewHostCountersOperator) in the pending batch; the host is noted as evicted, so that a
  // later load reads the sum.
  void AddAdmitted(uint64_t host_hash, uint64_t n);
  // Every host's saved counters (after the handed-over batches are written).
  Status ForEachCounters(
      const std::function<void(uint64_t, const frontier::HostCounters&)>& fn) const;
  void PutOverride(std::string_view host, const HostOverride& o);
  std::optional<HostOverride> GetOverride(std::string_view host) const;
  Status ForEachOverride(
      const std::function<void(const std::string&, const HostOverride&)>& fn) const;

  // ---- Persistent host ids (RocksQueueStore) ----
  // The name of host id `id`; false when unknown.
  bool GetName(uint32_t id, std::string* name) const;
  // The id a host evicted earlier had (RememberId), else a new one (NewId).
  uint32_t IdOf(std::string_view name);
  // The host leaves RAM: its id is kept in the pending batch, its name in the filter.
  void RememberId(std::string_view name, uint32_t id);
  uint64_t ids_given() const { return next_id_ - 1; }  // over all runs

  // ---- Hosts (names or admission hashes) evicted from RAM (may say yes wrongly) ----
  void NoteEvicted(std::string_view host) { evicted_.Insert(NameHash(host)); }
  void NoteEvicted(uint64_t key) { evicted_.Insert(key ^ kHashKeySalt); }
  bool MaybeEvicted(std::string_view host) const { return evicted_.MayContain(NameHash(host)); }
  bool MaybeEvicted(uint64_t key) const { return evicted_.MayContain(key ^ kHashKeySalt); }

 private:
  static uint64_t NameHash(std::string_view s) { return std::hash<std::string_view>()(s); }
  static constexpr uint64_t kHashKeySalt = 0x9e3779b97f4a7c15ull;

  // A new id for `name`, persisted in the pending batch.
  uint32_t NewId(std::string_view name);
  // A record into the pending batch (handed over once the batch is full).
  void Put(const std::string& key, const std::string& value);
  // Reads a record after the handed-over batches are written; false when absent.
  bool Get(const std::string& key, std::string* value) const;

  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const hosts_;
  rocksdb::ColumnFamilyHandle* const meta_;
  Committer* const committer_;
  uint32_t next_id_ = 1;
  dedup::BloomFilter evicted_;
};

}  // namespace harvest::state
