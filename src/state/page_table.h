// Private to src/state: page records for the admin API, the `pages` column family
// (state.h): id (8, big-endian, ascending from 1) -> PageEntry. The oldest records beyond
// StateOptions::pages_max are trimmed. StateReader reads the family with the same codec.
//
// Writer thread writes (straight to RocksDB, not through the pending batch; a failed write
// is also made the committer's sticky error); reads from any thread.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "state/committer.h"
#include "state/state.h"

namespace harvest::state {

class PageTable {
 public:
  // `db` and `cf` outlive the table; write errors go to `committer`; at most `max_pages`
  // records are kept (trimmed in ranges of 1024).
  PageTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer,
            uint64_t max_pages)
      : db_(db), cf_(cf), committer_(committer), max_pages_(max_pages) {}

  // At open: the highest id given and where trimming goes on.
  void Load();
  // Adds `page` (when given) under the next id to `batch` and writes the batch (when it
  // holds anything). Returns the page's id, 0 without a page.
  Result<uint64_t> Write(const std::optional<PageEntry>& page, rocksdb::WriteBatch* batch);
  std::optional<PageEntry> Get(uint64_t id) const;
  PageScan Scan(const PageFilter& filter) const;
  uint64_t last_id() const { return last_id_.load(); }  // the highest id given

 private:
  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  const uint64_t max_pages_;
  std::atomic<uint64_t> last_id_{0};  // written by the writer thread only
  uint64_t trimmed_below_ = 1;        // writer thread
};

}  // namespace harvest::state
