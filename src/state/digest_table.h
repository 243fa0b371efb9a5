// Private to src/state: payload digests of stored responses, the `digests` column family
// (state.h): digest -> DigestRecord (the record a revisit refers to).
//
// Writer thread (the I/O thread may read): writes go straight to RocksDB (not through the
// pending batch); a failed write is also made the committer's sticky error.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "state/committer.h"

namespace harvest::state {

class DigestTable {
 public:
  // `db` and `cf` outlive the table; write errors go to `committer`.
  DigestTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  // The record stored under `digest`; counts a hit.
  std::optional<DigestRecord> Find(const std::string& digest) const;
  Status Put(const std::string& digest, const DigestRecord& record);
  // The same into `batch` (written with a stored fetch's other records).
  void PutTo(rocksdb::WriteBatch* batch, const std::string& digest,
             const DigestRecord& record) const;
  uint64_t found() const { return hits_.load(); }  // Find hits

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  mutable std::atomic<uint64_t> hits_{0};
};

}  // namespace harvest::state
