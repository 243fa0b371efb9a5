// Private to src/state: shallower paths, the `depths` column family (state.h): fingerprint
// -> the least depth of a path that reached an admitted URL, kept by a minimum merge
// operator (NewMinDepthOperator, which every opener of the family must install).
//
// I/O thread only: its writes go into the committer's pending batch.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "state/committer.h"

namespace harvest::state {

// The `depths` column family's merge operator: the minimum of the depths.
std::shared_ptr<rocksdb::MergeOperator> NewMinDepthOperator();

class DepthTable {
 public:
  // `db` and `cf` outlive the table; writes go into `committer`'s pending batch.
  DepthTable(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Committer* committer)
      : db_(db), cf_(cf), committer_(committer) {}

  // Notes that a path of `depth` reached `fp` (merged as a minimum).
  void Note(uint64_t fp, int depth);
  // The least depth noted for `fp`, also while the note is still pending.
  std::optional<int> Noted(uint64_t fp) const;

 private:
  // Recent Note calls, direct-mapped by fingerprint: a repeat at no smaller depth writes
  // nothing, and a note not yet written is found here.
  struct NotedSlot {
    uint64_t fp = 0;
    int depth = 0;
  };
  static constexpr size_t kNotedSlots = 1u << 16;
  static size_t SlotOf(uint64_t fp) {
    return static_cast<size_t>(fp ^ (fp >> 31)) & (kNotedSlots - 1);
  }

  rocksdb::DB* const db_;
  rocksdb::ColumnFamilyHandle* const cf_;
  Committer* const committer_;
  std::vector<NotedSlot> noted_ = std::vector<NotedSlot>(kNotedSlots);
};

}  // namespace harvest::state
