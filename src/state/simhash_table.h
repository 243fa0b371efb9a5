// Private to src/state: the near-duplicate index's records, the `simhash` column family
// (state.h): sequence (8, big-endian) -> SimHashRecord. The index trims the oldest.
//
// Writer thread: its writes go straight to RocksDB (not through the pending batch); a
// failed write is also made the committer's sticky error.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "state/committer.h"

namespace harvest::state {

class SimHashTable {
 public:
  // `db` and `cf` outlive the table; write errors go to `committer`.
  SimHashTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  Status Put(uint64_t seq, const SimHashRecord& record);
  // The same into `batch` (written with a stored fetch's other records).
  void PutTo(rocksdb::WriteBatch* batch, uint64_t seq, const SimHashRecord& record) const;
  std::optional<SimHashRecord> Get(uint64_t seq) const;
  // Deletes the records below `below_seq`.
  Status Trim(uint64_t below_seq);
  // The newest `max` records, oldest first.
  Status ForEach(size_t max, const std::function<void(uint64_t, const SimHashRecord&)>& fn) const;

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
};

}  // namespace harvest::state
