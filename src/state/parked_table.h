// Private to src/state: parked URLs, the `parked` column family (state.h): admitted URLs of
// hosts not in RAM, waiting for room. The URLs a (class, host) gets between two hand-overs of
// the pending batch are one entry: keyed class (1) | host | '\0' | first queue sequence (8,
// big-endian) | kParkedGroupMark, valued, per URL, as the varint step from the previous URL's
// sequence (0 for the first), the varint length of its queue entry and the entry (EncodeItem:
// the fingerprint first, so loading readmits like a queue entry). One key per host and commit
// rather than per URL: the committer's memtable inserts and the family's compaction cost per
// key, and parked URLs arrive in random host order (docs/benchmarks.md, "Parked URLs grouped
// per host"). A database of format version 3 holds single URLs, keyed class | host | '\0' |
// sequence and valued as one queue entry; both are read. A (class, host) is a key prefix
// (NewParkedGroupPrefix, which every opener of the family must install).
//
// I/O thread only: its writes go into the committer's pending batch, at each hand-over
// (Flush, which the owner installs as the committer's SetBeforeHandOver).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/slice_transform.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "frontier/url_item.h"
#include "state/committer.h"

namespace harvest::state {

// The `parked` column family's prefix extractor: a key's (class, host) group.
std::shared_ptr<const rocksdb::SliceTransform> NewParkedGroupPrefix();

class ParkedTable {
 public:
  // `db` and `cf` outlive the table; writes go into `committer`'s pending batch.
  ParkedTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  // At open: counts the entries and calls `readmit` with each one's sequence and value (it
  // returns whether it readmitted the fingerprint). Sets *max_seq to the highest sequence.
  Status Load(uint64_t* max_seq,
              const std::function<bool(uint64_t seq, std::string_view value)>& readmit);
  // Parks `item` under queue sequence `seq` (higher than the sequences parked before): in
  // RAM with the other URLs of its (class, host) until the next Flush.
  void Add(const frontier::UrlItem& item, uint64_t seq);
  // Puts the groups gathered since the last call into the pending batch, in key order (the
  // memtable inserts neighbours cheaper than random keys).
  void Flush();
  // StateDb::TakeParked (state.h).
  size_t Take(size_t max_hosts, int classes, const std::function<void(frontier::UrlItem)>& fn);
  uint64_t count() const { return count_; }

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  // The URLs of one (class, host) gathered since the last Flush, encoded as its value.
  struct Group {
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    std::string value;
  };
  uint64_t count_ = 0;                               // URLs, gathered ones included
  std::string cursor_;                               // where Take goes on (wraps to the start)
  std::string scratch_;                              // encoding buffer
  std::string group_;                                // group prefix of the URL being added
  std::unordered_map<std::string, Group> gathered_;  // by group prefix
  size_t gathered_urls_ = 0;
};

}  // namespace harvest::state
