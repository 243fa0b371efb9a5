// The recrawl schedule and the near-duplicate index's records (docs/freshness.md).
#include <spdlog/spdlog.h>

#include "state/state_db_impl.h"

namespace harvest::state {

void StateDb::Impl::LoadSchedule() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), schedule_));
  it->SeekToFirst();
  if (it->Valid() && it->key().size() == kScheduleKeySize) {
    next_due_ = static_cast<int64_t>(ReadBigEndian(it->key().ToStringView(), 8));
  }
  // Exact counts would read every key of a large crawl at each start: RocksDB's estimate.
  uint64_t keys = 0;
  if (next_due_ && db_->GetIntProperty(schedule_, "rocksdb.estimate-num-keys", &keys)) {
    scheduled_ = std::max<uint64_t>(keys, 1);
  }
}

void StateDb::Impl::Schedule(const frontier::UrlItem& item, int64_t due_us) {
  frontier::UrlItem scheduled = item;
  scheduled.recrawl = true;
  scheduled.attempts = 0;
  scheduled.store_host = 0;
  scheduled.store_seq = 0;
  batch_.Put(schedule_, ScheduleKey(due_us, item.fp), EncodeScheduled(scheduled));
  ++scheduled_;
  if (!next_due_ || due_us < *next_due_) next_due_ = due_us;
}

size_t StateDb::Impl::TakeDue(int64_t now_us, size_t max,
                              const std::function<void(frontier::UrlItem)>& fn) {
  if (!next_due_ || *next_due_ > now_us || max == 0) return 0;
  // Entries scheduled or taken in the pending batch must be visible to the iterator.
  if (!HandOver().ok() || !WaitWritten().ok()) return 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), schedule_));
  size_t taken = 0;
  next_due_.reset();
  std::vector<std::pair<std::string, frontier::UrlItem>> due;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() != kScheduleKeySize) continue;
    const auto due_us = static_cast<int64_t>(ReadBigEndian(key, 8));
    if (due_us > now_us || due.size() >= max) {
      next_due_ = due_us;
      break;
    }
    frontier::UrlItem item;
    if (!DecodeScheduled(it->value().ToStringView(), &item)) {
      spdlog::error("state: undecodable schedule entry dropped");
      batch_.Delete(schedule_, it->key());
      continue;
    }
    due.emplace_back(std::string(key), std::move(item));
  }
  if (!it->status().ok()) SetError(FromRocks(it->status(), "state: read schedule"));
  it.reset();
  for (auto& [key, item] : due) {
    // Delete first: the item's queue entry, written by fn, lands in the same batch (a
    // hand-over happens only after a queue push), so a crash keeps exactly one of the two.
    batch_.Delete(schedule_, key);
    if (scheduled_ > 0) --scheduled_;
    fn(std::move(item));
    ++taken;
  }
  return taken;
}

bool StateDb::Impl::Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us) {
  if (record.next_due_us <= 0 || due_us == record.next_due_us) return false;
  const std::string old_key = ScheduleKey(record.next_due_us, fp);
  std::string value;
  (void)WaitWritten();
  if (!GetValue(schedule_, old_key, &value).ok()) return false;
  batch_.Delete(schedule_, old_key);
  batch_.Put(schedule_, ScheduleKey(due_us, fp), value);
  SeenRecord moved = record;
  moved.next_due_us = due_us;
  batch_.Put(seen_, SeenKey(fp), EncodeSeen(moved));
  if (!next_due_ || due_us < *next_due_) next_due_ = due_us;
  MaybeCommit();
  return true;
}

Status StateDb::Impl::PutSimHash(uint64_t seq, const SimHashRecord& record) {
  std::string key;
  PutBigEndian(&key, seq, 8);
  Status s = FromRocks(db_->Put(rocksdb::WriteOptions(), simhash_, key, EncodeSimHash(record)),
                       "state: write");
  if (!s.ok()) SetError(s);
  return s;
}

std::optional<SimHashRecord> StateDb::Impl::GetSimHash(uint64_t seq) const {
  std::string key, value;
  PutBigEndian(&key, seq, 8);
  if (!GetValue(simhash_, key, &value).ok()) return std::nullopt;
  SimHashRecord r;
  if (!DecodeSimHash(value, &r)) return std::nullopt;
  return r;
}

Status StateDb::Impl::TrimSimHashes(uint64_t below_seq) {
  std::string from, to;
  PutBigEndian(&from, 0, 8);
  PutBigEndian(&to, below_seq, 8);
  Status s =
      FromRocks(db_->DeleteRange(rocksdb::WriteOptions(), simhash_, from, to), "state: write");
  if (!s.ok()) SetError(s);
  return s;
}

Status StateDb::Impl::ForEachSimHash(
    size_t max, const std::function<void(uint64_t, const SimHashRecord&)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), simhash_));
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

// ---- StateDb forwarding ----

std::optional<int64_t> StateDb::NextDue() const { return impl_->NextDue(); }
size_t StateDb::TakeDue(int64_t now_us, size_t max,
                        const std::function<void(frontier::UrlItem)>& fn) {
  return impl_->TakeDue(now_us, max, fn);
}
uint64_t StateDb::scheduled() const { return impl_->scheduled(); }
bool StateDb::Reschedule(uint64_t fp, const SeenRecord& record, int64_t due_us) {
  return impl_->Reschedule(fp, record, due_us);
}
Status StateDb::PutSimHash(uint64_t seq, const SimHashRecord& record) {
  return impl_->PutSimHash(seq, record);
}
std::optional<SimHashRecord> StateDb::GetSimHash(uint64_t seq) const {
  return impl_->GetSimHash(seq);
}
Status StateDb::TrimSimHashes(uint64_t below_seq) { return impl_->TrimSimHashes(below_seq); }
Status StateDb::ForEachSimHash(
    size_t max, const std::function<void(uint64_t, const SimHashRecord&)>& fn) const {
  return impl_->ForEachSimHash(max, fn);
}

}  // namespace harvest::state
