// ScheduleTable (schedule_table.h): the recrawl schedule (docs/freshness.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "state/internal.h"
#include "state/schedule_table.h"

namespace harvest::state {

void ScheduleTable::Load() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_));
  it->SeekToFirst();
  if (it->Valid() && it->key().size() == kScheduleKeySize) {
    next_due_ = static_cast<int64_t>(ReadBigEndian(it->key().ToStringView(), 8));
  }
  // Exact counts would read every key of a large crawl at each start: RocksDB's estimate.
  uint64_t keys = 0;
  if (next_due_ && db_->GetIntProperty(cf_, "rocksdb.estimate-num-keys", &keys)) {
    count_ = std::max<uint64_t>(keys, 1);
  }
}

void ScheduleTable::Add(const frontier::UrlItem& item, int64_t due_us) {
  frontier::UrlItem scheduled = item;
  scheduled.recrawl = true;
  scheduled.attempts = 0;
  scheduled.store_host = 0;
  scheduled.store_seq = 0;
  committer_->batch()->Put(cf_, ScheduleKey(due_us, item.fp), EncodeScheduled(scheduled));
  ++count_;
  if (!next_due_ || due_us < *next_due_) next_due_ = due_us;
}

bool ScheduleTable::Move(uint64_t fp, int64_t from_us, int64_t to_us) {
  const std::string old_key = ScheduleKey(from_us, fp);
  std::string value;
  (void)committer_->WaitWritten();
  if (!ReadValue(db_, cf_, old_key, &value).ok()) return false;
  rocksdb::WriteBatch* batch = committer_->batch();
  batch->Delete(cf_, old_key);
  batch->Put(cf_, ScheduleKey(to_us, fp), value);
  if (!next_due_ || to_us < *next_due_) next_due_ = to_us;
  return true;
}

size_t ScheduleTable::TakeDue(int64_t now_us, size_t max,
                              const std::function<void(frontier::UrlItem)>& fn) {
  if (!next_due_ || *next_due_ > now_us || max == 0) return 0;
  // Entries scheduled or taken in the pending batch must be visible to the iterator.
  if (!committer_->WritePending().ok()) return 0;
  rocksdb::WriteBatch* batch = committer_->batch();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_));
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
      batch->Delete(cf_, it->key());
      continue;
    }
    due.emplace_back(std::string(key), std::move(item));
  }
  if (!it->status().ok()) committer_->SetError(FromRocks(it->status(), "state: read schedule"));
  it.reset();
  for (auto& [key, item] : due) {
    // Delete first: the item's queue entry, written by fn, lands in the same batch (a
    // hand-over happens only after a queue push), so a crash keeps exactly one of the two.
    batch->Delete(cf_, key);
    if (count_ > 0) --count_;
    fn(std::move(item));
    ++taken;
  }
  return taken;
}

}  // namespace harvest::state
