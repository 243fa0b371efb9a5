// Private to src/state: deferred URLs, the `deferred` column family (state.h): URLs of a host
// over its budget (discovery ratio, daily fetch quota), waiting on disk to be admitted as its
// fetches catch up or the next day comes (docs/admission.md "Budgets"). Keyed host name |
// '\0' | queue sequence (8, big-endian), valued as queue entries (EncodeItem: the
// fingerprint first, so loading readmits like a queue entry). A host's backlog is a key
// prefix (NewDeferredHostPrefix, which every opener of the family must install), taken
// oldest first.
//
// I/O thread only: its writes go into the committer's pending batch.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/slice_transform.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "frontier/url_item.h"
#include "state/committer.h"

namespace harvest::state {

// The `deferred` column family's prefix extractor: a key's host name and its NUL.
std::shared_ptr<const rocksdb::SliceTransform> NewDeferredHostPrefix();

class DeferredTable {
 public:
  // `db` and `cf` outlive the table; writes go into `committer`'s pending batch.
  DeferredTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  // At open: counts the entries per host name (into *per_host) and calls `readmit` with each
  // one's sequence and value. Sets *max_seq to the highest sequence.
  Status Load(uint64_t* max_seq, std::map<std::string, uint64_t>* per_host,
              const std::function<void(uint64_t seq, std::string_view value)>& readmit);
  // Defers `item` of host name `name` under queue sequence `seq`, in the pending batch.
  void Add(std::string_view name, const frontier::UrlItem& item, uint64_t seq);
  // Takes up to `max` of the name's entries, oldest first: each is deleted in the pending
  // batch, then handed to `fn` (whose queue push lands in the same batch). Returns how many.
  size_t Take(std::string_view name, size_t max, const std::function<void(frontier::UrlItem)>& fn);
  uint64_t count() const { return count_; }

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  uint64_t count_ = 0;   // entries
  std::string scratch_;  // encoding buffer
};

}  // namespace harvest::state
