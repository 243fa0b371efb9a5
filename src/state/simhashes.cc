// SimHashTable (simhash_table.h): the near-duplicate index's records (docs/freshness.md).
#include <memory>
#include <string>

#include "state/internal.h"
#include "state/simhash_table.h"

namespace harvest::state {
namespace {

std::string SimHashKey(uint64_t seq) {
  std::string key;
  PutBigEndian(&key, seq, 8);
  return key;
}

}  // namespace

Status SimHashTable::Put(uint64_t seq, const SimHashRecord& record) {
  Status s =
      FromRocks(db_->Put(rocksdb::WriteOptions(), cf_, SimHashKey(seq), EncodeSimHash(record)),
                "state: write");
  if (!s.ok()) committer_->SetError(s);
  return s;
}

void SimHashTable::PutTo(rocksdb::WriteBatch* batch, uint64_t seq,
                         const SimHashRecord& record) const {
  batch->Put(cf_, SimHashKey(seq), EncodeSimHash(record));
}

std::optional<SimHashRecord> SimHashTable::Get(uint64_t seq) const {
  std::string value;
  if (!ReadValue(db_, cf_, SimHashKey(seq), &value).ok()) return std::nullopt;
  SimHashRecord r;
  if (!DecodeSimHash(value, &r)) return std::nullopt;
  return r;
}

Status SimHashTable::Trim(uint64_t below_seq) {
  Status s = FromRocks(
      db_->DeleteRange(rocksdb::WriteOptions(), cf_, SimHashKey(0), SimHashKey(below_seq)),
      "state: write");
  if (!s.ok()) committer_->SetError(s);
  return s;
}

Status SimHashTable::ForEach(size_t max,
                             const std::function<void(uint64_t, const SimHashRecord&)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_));
  // Find where the newest `max` begin, then read forward (oldest first).
  size_t n = 0;
  it->SeekToLast();
  for (; it->Valid() && n < max; it->Prev()) ++n;
  if (it->Valid()) {
    it->Next();
  } else {
    it->SeekToFirst();
  }
  for (; it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    SimHashRecord r;
    if (key.size() != 8 || !DecodeSimHash(it->value().ToStringView(), &r)) continue;
    fn(ReadBigEndian(key, 8), r);
  }
  return FromRocks(it->status(), "state: read simhash");
}

}  // namespace harvest::state
