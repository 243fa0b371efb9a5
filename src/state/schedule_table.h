// Private to src/state: the recrawl schedule, the `schedule` column family (state.h,
// docs/freshness.md): due time (8, big-endian wall µs) | fingerprint (8) -> the host and
// the item to recrawl. The earliest due time and an entry count are kept in RAM.
//
// I/O thread only: its writes go into the committer's pending batch.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "frontier/url_item.h"
#include "state/committer.h"

namespace harvest::state {

class ScheduleTable {
 public:
  // `db` and `cf` outlive the table; writes go into `committer`'s pending batch.
  ScheduleTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  // At open: the earliest due time and (RocksDB's estimate of) the count.
  void Load();
  // Schedules `item` (as a recrawl) at `due_us`, in the pending batch.
  void Add(const frontier::UrlItem& item, int64_t due_us);
  // Moves the entry of `fp` due at `from_us` to `to_us`; false when there is none.
  bool Move(uint64_t fp, int64_t from_us, int64_t to_us);
  // Takes up to `max` entries due at `now_us`, earliest first, each deleted in the batch
  // that fn's queue push lands in. Returns how many fn got.
  size_t TakeDue(int64_t now_us, size_t max, const std::function<void(frontier::UrlItem)>& fn);
  std::optional<int64_t> next_due() const { return next_due_; }
  uint64_t count() const { return count_; }

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  std::optional<int64_t> next_due_;  // earliest entry
  uint64_t count_ = 0;               // entries
};

}  // namespace harvest::state
