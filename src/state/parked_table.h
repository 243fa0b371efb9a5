// Private to src/state: parked URLs, the `parked` column family (state.h): admitted URLs of
// hosts not in RAM, waiting for room. Keyed class (1) | host | '\0' | queue sequence (8,
// big-endian), valued as queue entries (EncodeItem: the fingerprint first, so loading
// readmits like a queue entry). A (class, host) group is a key prefix
// (NewParkedGroupPrefix, which every opener of the family must install).
//
// I/O thread only: its writes go into the committer's pending batch.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/slice_transform.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
  // Parks `item` under queue sequence `seq`, in the pending batch.
  void Add(const frontier::UrlItem& item, uint64_t seq);
  // StateDb::TakeParked (state.h).
  size_t Take(size_t max_hosts, int classes, const std::function<void(frontier::UrlItem)>& fn);
  uint64_t count() const { return count_; }

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  uint64_t count_ = 0;   // entries
  std::string cursor_;   // where Take goes on (wraps to the start)
  std::string scratch_;  // encoding buffer
};

}  // namespace harvest::state
