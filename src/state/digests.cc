// DigestTable (digest_table.h): payload digests of stored responses.
#include "state/digest_table.h"
#include "state/internal.h"

namespace harvest::state {

std::optional<DigestRecord> DigestTable::Find(const std::string& digest) const {
  std::string value;
  if (!ReadValue(db_, cf_, digest, &value).ok()) return std::nullopt;
  DigestRecord d;
  if (!DecodeDigest(value, &d)) return std::nullopt;
  ++hits_;
  return d;
}

Status DigestTable::Put(const std::string& digest, const DigestRecord& record) {
  Status s = FromRocks(db_->Put(rocksdb::WriteOptions(), cf_, digest, EncodeDigest(record)),
                       "state: write");
  if (!s.ok()) committer_->SetError(s);
  return s;
}

void DigestTable::PutTo(rocksdb::WriteBatch* batch, const std::string& digest,
                        const DigestRecord& record) const {
  batch->Put(cf_, digest, EncodeDigest(record));
}

}  // namespace harvest::state
